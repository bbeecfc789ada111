/// Builds short ASCII `String`s (up to 15 bytes: most names, titles, identifiers and keys)
/// directly in the standard library's small-string form, which lives inside the `String` value.
///
/// Why: the public initializers build such a string out of line, with a closure and a second
/// pass over the bytes (about 130 instructions, a fifth of decoding a string field); this is
/// two loads, one mask test and two stores.
///
/// Safety: the form (16 bytes: the UTF-8 bytes in order, then a discriminator byte holding the
/// small and ASCII flags and the count) is the standard library's, not a public promise. It is
/// checked once per process (`isAvailable`): strings built here must have exactly the bits of
/// strings the standard library builds from the same bytes, for every length 0...15. If that
/// ever fails, this is never used and strings are built the public way.
enum BinarySmallString {
    /// The string of `bytes` if they are at most 15 ASCII bytes (then they are valid UTF-8);
    /// nil otherwise, or if the small-string form could not be confirmed.
    @inline(__always)
    static func ascii(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count <= 15, isAvailable else { return nil }
        return build(bytes)
    }

    /// The string of a binary coder's `String` value (`[length][UTF-8 bytes]`) when its length
    /// fits one byte and it is at most 15 ASCII bytes; nil otherwise (the caller then takes the
    /// general path, which also reports damage). The caller checked `isAvailable` already
    /// (through `BinaryDecodingShortcuts`).
    @inline(__always)
    static func lengthPrefixedASCII(confirmed value: UnsafeRawBufferPointer) -> String? {
        let count = value.count
        guard count >= 1, count <= 16, let base = value.baseAddress, Int(base.load(as: UInt8.self)) == count - 1 else {
            return nil
        }
        return build(UnsafeRawBufferPointer(start: base + 1, count: count - 1))
    }

    @inline(__always)
    private static func build(_ bytes: UnsafeRawBufferPointer) -> String? {
        var words = load(bytes)
        guard (words.0 | words.1) & 0x8080_8080_8080_8080 == 0 else { return nil }
        // Byte 15 (the high byte of the second word on this little-endian layout): immortal,
        // small and ASCII flags (0xE0) and the count.
        words.1 |= (0xE0 | UInt64(bytes.count)) << 56
        // Moved out of a stack slot rather than bit cast: a bit-cast `String` is a borrowed value,
        // which the caller retains to return it (a `swift_bridgeObjectRetain` call per field that
        // does nothing for a small string); a moved one is already owned.
        return withUnsafeTemporaryAllocation(of: String.self, capacity: 1) { slot in
            UnsafeMutableRawPointer(slot.baseAddress!).storeBytes(of: words, as: (UInt64, UInt64).self)
            return slot.baseAddress!.move()
        }
    }

    /// The 0...15 bytes as two little-endian words, zero above `count`. Overlapping loads that
    /// stay within the buffer (a byte loop or a `memcpy` call cost several times as much); where
    /// two loads overlap they read the same bytes, so or-ing them is exact.
    @inline(__always)
    private static func load(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        let count = bytes.count
        guard let base = bytes.baseAddress, count > 0 else { return (0, 0) }
        if count >= 8 {
            // `>>` by 64 (count 8) is 0 in Swift, so no tail word then.
            let tail = base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) >> (UInt64(16 - count) * 8)
            return (base.loadUnaligned(as: UInt64.self), tail)
        }
        if count >= 4 {
            let head = UInt64(base.loadUnaligned(as: UInt32.self))
            let last = UInt64(base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            return (head | last << (UInt64(count - 4) * 8), 0)
        }
        let first = UInt64(base.load(as: UInt8.self))
        let middle = UInt64(base.load(fromByteOffset: count / 2, as: UInt8.self))
        let last = UInt64(base.load(fromByteOffset: count - 1, as: UInt8.self))
        return (first | middle << (UInt64(count / 2) * 8) | last << (UInt64(count - 1) * 8), 0)
    }

    /// Whether `build` gives exactly what the standard library gives (see the type's comment).
    static let isAvailable: Bool = {
        guard MemoryLayout<String>.size == 16, MemoryLayout<(UInt64, UInt64)>.size == 16 else { return false }
        // 16 ASCII bytes including the edges of the range (0x00, 0x01, 0x7F), so that a future
        // layout whose flags depend on the byte values is caught here, at run time.
        let sample: [UInt8] = Array("Strata s".utf8) + [0x00, 0x01, 0x7F, 0x20] + Array("str~".utf8)
        for count in 0...15 {
            let matches = sample.withUnsafeBytes { all in
                let bytes = UnsafeRawBufferPointer(rebasing: all[..<count])
                let expected = String(decoding: bytes, as: UTF8.self)
                guard let built = build(bytes) else { return false }
                return unsafeBitCast(built, to: (UInt64, UInt64).self) == unsafeBitCast(expected, to: (UInt64, UInt64).self)
                    && built == expected && built.utf8.elementsEqual(bytes)
            }
            guard matches else { return false }
        }
        return true
    }()
}
