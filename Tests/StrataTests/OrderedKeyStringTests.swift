import Foundation
import Strata
import Testing

@Suite("OrderedKey strings")
struct OrderedKeyStringTests {
    /// Byte order of the UTF-8, which the encoding promises (for NFC strings).
    private func utf8Sign(_ lhs: String, _ rhs: String) -> Int {
        byteOrderSign(Array(lhs.utf8), Array(rhs.utf8))
    }

    private static let edgeValues = [
        "", "\0", "\0\0", "a", "a\0", "a\0b", "a\0\0", "a\u{1}", "a\u{7F}", "ab", "b",
        "hell", "hello", "helloo", "hellp", "hellø", "Hello", "\u{FF}", "\u{100}", "\u{7FF}", "\u{800}",
        "\u{FFFF}", "\u{10000}", "😀", "😀😀", "😁", "日本", "日本語", "\u{10FFFF}", "z\u{FFFD}",
    ]

    @Test func edgeValuesSortByUTF8Bytes() {
        expectOrderPreserved(Self.edgeValues, compare: utf8Sign)
        expectOrderPreserved(Self.edgeValues)  // and, for these NFC strings, by String's own `<`
    }

    @Test func randomStringsSortByUTF8Bytes() {
        var generator = makeCodingTestGenerator("random strings")
        // No combining marks here, so every string is NFC and raw UTF-8 order applies.
        let alphabet: [Unicode.Scalar] = ["\0", "\u{1}", "a", "b", "z", "\u{7F}", "\u{80}", "é", "\u{7FF}", "\u{800}", "€", "\u{FFFF}", "😀", "\u{10FFFF}"]
        let values = (0..<250).map { _ -> String in
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...6, using: &generator) {
                scalars.append(alphabet.randomElement(using: &generator)!)
            }
            return String(scalars)
        }
        expectOrderPreserved(values, compare: utf8Sign)
        expectOrderPreserved(values)
    }

    @Test func canonicallyEquivalentStringsShareOneKey() throws {
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed)
        #expect(precomposed.orderedKeyBytes == decomposed.orderedKeyBytes)
        #expect(try String(orderedKeyBytes: decomposed.orderedKeyBytes) == decomposed)
    }

    /// With combining marks, the key order is NFC scalar order. Swift's own `<` does not
    /// follow it consistently on non-NFC input (on Swift 6.3 `"c\u{327}"` vs `"\u{E7}a"` is
    /// neither `<`, `>` nor `==`, and `"e\u{323}" < "e\u{323}\u{327}"` although NFC
    /// reorders the marks the other way), so it is checked as: `==` exactly matches key
    /// equality, and `<` agrees with the key order whenever both strings are already NFC.
    @Test func combiningMarksFollowNFCOrder() {
        var generator = makeCodingTestGenerator("combining marks")
        let alphabet: [Unicode.Scalar] = ["a", "c", "e", "A", "\u{E9}", "\u{E7}", "\u{301}", "\u{327}", "\u{323}", "\u{30A}", "\u{212B}"]
        let values = (0..<200).map { _ -> String in
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                scalars.append(alphabet.randomElement(using: &generator)!)
            }
            return String(scalars)
        }
        expectOrderPreserved(values) { lhs, rhs in
            utf8Sign(lhs.precomposedStringWithCanonicalMapping, rhs.precomposedStringWithCanonicalMapping)
        }
        var failures: [String] = []
        for lhs in values {
            for rhs in values {
                let keyOrder = byteOrderSign(lhs.orderedKeyBytes, rhs.orderedKeyBytes)
                if (lhs == rhs) != (keyOrder == 0) { failures.append("== disagrees for \(lhs.debugDescription), \(rhs.debugDescription)") }
                let bothNFC = [lhs, rhs].allSatisfy { $0.utf8.elementsEqual($0.precomposedStringWithCanonicalMapping.utf8) }
                if bothNFC && comparableSign(lhs, rhs) != keyOrder {
                    failures.append("< disagrees for NFC strings \(lhs.debugDescription), \(rhs.debugDescription)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test func embeddedNulIsEscaped() {
        #expect("a\0b".orderedKeyBytes == [0x61, 0x00, 0xFF, 0x62, 0x00, 0x00])
        #expect("".orderedKeyBytes == [0x00, 0x00])
    }

    @Test func malformedEncodingsThrow() {
        for value in ["", "a\0b", "hello", "😀"] {
            expectTruncationsThrow(value, as: String.self)
        }
        let invalid: [[UInt8]] = [
            [0x61, 0x00, 0x05, 0x00, 0x00],  // 0x00 followed by neither 0x00 nor 0xFF
            [0xC3, 0x28, 0x00, 0x00],  // invalid UTF-8
            [0xFF, 0x00, 0x00],  // invalid UTF-8 lead byte
            Array("e\u{301}".utf8) + [0x00, 0x00],  // valid UTF-8 but not NFC
            [0x61, 0x00, 0x00, 0x61],  // trailing byte
        ]
        for bytes in invalid {
            #expect(throws: OrderedKeyError.self, "\(bytes)") { _ = try String(orderedKeyBytes: bytes) }
        }
    }

    /// `skipOrderedKey` (used to reach the identifier in an index key) ends exactly where
    /// decoding ends, and rejects the escapes decoding rejects.
    @Test func skipEndsWhereDecodingEnds() throws {
        for value in Self.edgeValues {
            let bytes = value.orderedKeyBytes + [0x42, 0x43]
            try bytes.withUnsafeBytes { raw in
                var decoding = OrderedKeyReader(raw)
                _ = try String.decodeOrderedKey(from: &decoding)
                var skipping = OrderedKeyReader(raw)
                try String.skipOrderedKey(in: &skipping)
                #expect(skipping.offset == decoding.offset, "\(value.debugDescription)")
            }
        }
        for bytes: [UInt8] in [[0x61, 0x00, 0x05, 0x00, 0x00], [0x61, 0x62], [0x61, 0x00], []] {
            var reader = OrderedKeyReader(bytes)
            #expect(throws: OrderedKeyError.self, "\(bytes)") { try String.skipOrderedKey(in: &reader) }
        }
    }
}
