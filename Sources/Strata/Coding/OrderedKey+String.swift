import Foundation

/// Strings are stored as their **NFC-normalised UTF-8 bytes** in escaped, terminated form
/// (`0x00` → `0x00 0xFF`, end = `0x00 0x00`; see `OrderedKeyWriter.writeEscaped(_:)`), so
/// embedded NULs are safe and a string sorts before all of its extensions ("hell" < "hello").
///
/// Ordering is **by UTF-8 bytes of the NFC form**. UTF-8 was designed so that byte order
/// equals Unicode scalar order, so this is "lexicographic by Unicode scalar value".
///
/// How this relates to `String`'s own `==` and `<`: Swift compares strings by *canonical
/// equivalence*, i.e. `"\u{E9}" == "e\u{301}"`, and orders them by the scalars of their
/// normalised form. Storing raw UTF-8 would give two `==` strings two different keys (a
/// uniqueness bug in an index), so the key uses NFC, the form Swift itself compares. The
/// result (verified by randomized tests): `==` strings share one key, and for strings
/// already in NFC (all ASCII, and text from most sources) the byte order equals `<`. For
/// non-NFC input the key order is still a consistent total order (NFC scalar order), but
/// Swift 6.3's `<` does not follow it consistently there: e.g. `"c\u{327}"` vs `"\u{E7}a"`
/// is neither `<`, `>` nor `==`, `"e\u{323}" < "e\u{323}\u{327}"` although NFC reorders
/// the marks so that the key order is the reverse, and some conjoining Hangul jamo
/// sequences behave similarly. Callers needing `<`-exact order should store NFC text.
///
/// Decoding returns the NFC string (`==` to what was encoded) and rejects invalid UTF-8 and
/// non-NFC payloads, so every accepted key is canonical.
extension String: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        var canonical = OrderedStringNormalization.canonical(self)
        canonical.withUTF8 { writer.writeEscaped(UnsafeRawBufferPointer($0)) }
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> String {
        let start = reader.offset
        let payload = try reader.readEscaped(reading: "String")
        guard let string = payload.withUnsafeBytes({ BinaryUTF8.string(from: $0) }) else {
            throw reader.invalid("payload is not valid UTF-8", reading: "String", at: start)
        }
        guard OrderedStringNormalization.isCanonical(string) else {
            throw reader.invalid("payload is not in Unicode NFC", reading: "String", at: start)
        }
        return string
    }

    /// The key's bytes built on the stack for strings of up to 256 UTF-8 bytes that are
    /// trivially NFC (the usual case: a unique-index value such as an email or an ISBN), so a
    /// lookup by such a value allocates nothing; the bytes are exactly `orderedKeyBytes`.
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        var string = self
        let lent: Bool = try string.withUTF8 { utf8 in
            guard utf8.count <= 256, OrderedStringNormalization.isTriviallyNFC(utf8: utf8) else { return false }
            // Each zero byte becomes two bytes, and the terminator adds two.
            try withUnsafeTemporaryAllocation(byteCount: utf8.count * 2 + 2, alignment: 1) { storage in
                var end = 0
                for byte in utf8 {
                    storage[end] = byte
                    end += 1
                    if byte == 0 {
                        storage[end] = 0xFF
                        end += 1
                    }
                }
                storage[end] = 0
                storage[end + 1] = 0
                try body(UnsafeRawBufferPointer(rebasing: storage[..<(end + 2)]))
            }
            return true
        }
        if !lent { try orderedKeyBytes.withUnsafeBytes(body) }
    }

    /// Finds the terminator without copying or validating the payload.
    public static func skipOrderedKey(in reader: inout OrderedKeyReader) throws {
        try reader.skipEscaped(reading: "String")
    }
}

enum OrderedStringNormalization {
    /// Scalars below U+0300 (the first combining mark) are NFC-stable and never compose with
    /// a predecessor; their UTF-8 lead bytes are all below 0xCC. Checking this skips the
    /// expensive normalisation for ASCII and most Latin text.
    static func isTriviallyNFC(_ string: String) -> Bool {
        var copy = string
        return copy.withUTF8 { isTriviallyNFC(utf8: $0) }
    }

    /// `isTriviallyNFC` on a string's UTF-8 bytes.
    @inline(__always)
    static func isTriviallyNFC(utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        utf8.allSatisfy { $0 < 0xCC }
    }

    static func canonical(_ string: String) -> String {
        isTriviallyNFC(string) ? string : string.precomposedStringWithCanonicalMapping
    }

    static func isCanonical(_ string: String) -> Bool {
        isTriviallyNFC(string) || string.utf8.elementsEqual(string.precomposedStringWithCanonicalMapping.utf8)
    }
}
