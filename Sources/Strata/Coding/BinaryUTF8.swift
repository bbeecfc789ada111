/// Strict UTF-8 validation (Unicode Table 3-7: no overlongs, no surrogates, nothing above
/// U+10FFFF) and `String` construction for decoded bytes.
///
/// Why not `String(validating:as:)`: on this toolchain it runs unspecialized inside the
/// standard library and performs runtime metadata lookups on every call, which made it the
/// single largest cost of decoding a typical record. The validation is done once here; the
/// `String` is then built by `String(unsafeUninitializedCapacity:initializingUTF8With:)`, which
/// is inlined here: a string of up to 15 ASCII bytes (most keys, names and identifiers) becomes
/// a small string with one copy and no call into the standard library, where
/// `String(decoding:as:)` re-scanned the bytes out of line. Up to 15 ASCII bytes take a shorter
/// path still (`BinarySmallString`).
/// Shared by the binary coder and by `String`'s ordered-key decoding.
enum BinaryUTF8 {
    static func string(from bytes: UnsafeRawBufferPointer) -> String? {
        if let small = BinarySmallString.ascii(bytes) { return small }
        guard isValid(bytes) else { return nil }
        return String(unsafeUninitializedCapacity: bytes.count) { storage in
            // `bytes` is valid UTF-8, so the initializer's repair step (non-ASCII or large
            // strings) changes nothing.
            UnsafeMutableRawBufferPointer(storage).copyMemory(from: bytes)
            return bytes.count
        }
    }

    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var index = 0
        // ASCII fast path, eight bytes at a time.
        while index + 8 <= count, bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
            index += 8
        }
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var secondLow: UInt8 = 0x80, secondHigh: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; secondLow = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; secondHigh = 0x9F
            case 0xF0: length = 4; secondLow = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; secondHigh = 0x8F
            default: return false
            }
            guard count - index >= length else { return false }
            let second = bytes[index + 1]
            guard second >= secondLow, second <= secondHigh else { return false }
            for offset in 2..<max(2, length) where bytes[index + offset] & 0xC0 != 0x80 {
                return false
            }
            index += length
        }
        return true
    }
}
