import Foundation
@testable import Strata
import Testing

// Short ASCII strings are built in the standard library's small-string form directly
// (`BinarySmallString`); these tests pin that the result is bit-for-bit the standard library's
// own, at every length, and that everything else still takes the validating path.

@Suite("Binary coder small strings")
struct BinarySmallStringTests {
    @Test func theFormIsConfirmedOnThisToolchain() {
        // If this fails the decoder still works (the public initializer is used), only slower.
        #expect(BinarySmallString.isAvailable)
    }

    @Test func everyLengthMatchesTheStandardLibrary() {
        var generator = makeCodingTestGenerator("small strings")
        for _ in 0..<200 {
            for count in 0...15 {
                let bytes = (0..<count).map { _ in UInt8.random(in: 0...0x7F, using: &generator) }
                let expected = String(decoding: bytes, as: UTF8.self)
                let built = bytes.withUnsafeBytes { BinarySmallString.ascii($0) }
                #expect(built == expected)
                #expect(built.map { Array($0.utf8) } == bytes)
                if let built {
                    #expect(unsafeBitCast(built, to: (UInt64, UInt64).self) == unsafeBitCast(expected, to: (UInt64, UInt64).self))
                }
            }
        }
    }

    @Test func nonASCIIAndLongStringsTakeTheValidatingPath() throws {
        for text in ["é", "naïve", "0123456789abcdef", String(repeating: "x", count: 40), "日本語", "a\u{0}b"] {
            let bytes = Array(text.utf8)
            let small = bytes.withUnsafeBytes { BinarySmallString.ascii($0) }
            #expect(small == (bytes.count <= 15 && bytes.allSatisfy { $0 < 0x80 } ? text : nil))
            #expect(bytes.withUnsafeBytes { BinaryUTF8.string(from: $0) } == text)
        }
        // Invalid UTF-8 is still rejected, short or long.
        for invalid: [UInt8] in [[0xFF], [0x61, 0xC3], [0xED, 0xA0, 0x80], Array(repeating: 0x61, count: 20) + [0x80]] {
            #expect(invalid.withUnsafeBytes { BinaryUTF8.string(from: $0) } == nil)
        }
        // Through the coder: string fields of every length round-trip.
        struct Named: Codable, Equatable { var name: String }
        for count in 0...20 {
            let value = Named(name: String(repeating: "n", count: count))
            #expect(try BinaryInstanceDecoder().decode(Named.self, from: BinaryInstanceEncoder().encode(value)) == value)
        }
    }
}
