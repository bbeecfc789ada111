/// The fast path of decoding a stored ordered string (a property key, a type label, a string
/// value): most are short ASCII, and for those the general decoder's work (copying the escaped
/// payload into an array, validating UTF-8, checking NFC) is wasted: bytes 0x01...0x7F are always
/// valid UTF-8 and always NFC, and a payload without a zero byte has no escapes.
///
/// Anything else (a non-ASCII byte, an escaped zero, a malformed encoding) is left to the general
/// decoder (`OrderedKeyReader.read(String.self)`), which accepts and rejects exactly as before:
/// this path only ever returns what that decoder would return for the same bytes.
enum EntityASCIIString {
    /// The string `raw` encodes when `raw` is exactly one ordered string (payload, then the
    /// terminator 0x00 0x00) whose payload is ASCII without zero bytes; nil otherwise.
    static func decode(wholeEncoding raw: UnsafeRawBufferPointer) -> String? {
        let payloadCount = raw.count - 2
        guard payloadCount >= 0, raw[payloadCount] == 0, raw[payloadCount + 1] == 0 else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: raw[0..<payloadCount])
        guard isPlainASCII(payload) else { return nil }
        // As typed bytes: the standard library's fast path takes a buffer of `UInt8`, while a raw
        // buffer went through its generic (element by element) path.
        return String(decoding: payload.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// Whether every byte lies in 0x01...0x7F: eight bytes at a time, then the rest one by one.
    static func isPlainASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let ones: UInt64 = 0x0101_0101_0101_0101
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            // With every high bit clear, `(word - ones) & highBits` is nonzero exactly when
            // some byte is zero (the borrow out of a zero byte sets its high bit).
            guard word & highBits == 0, (word &- ones) & highBits == 0 else { return false }
            index += 8
        }
        while index < bytes.count {
            let byte = bytes[index]
            guard byte != 0, byte < 0x80 else { return false }
            index += 1
        }
        return true
    }
}
