import Foundation
@testable import Strata
import Testing

// The decoder's inlined fast paths (issue #16): a field found by its key's bits in stored
// order, a one-byte container header, short ASCII strings read straight from their length
// byte, UUIDs read as their bytes, and the stack-lent ordered key of a `String`. Each test
// checks the fast path gives what the general path gives, and that anything the fast path
// does not take (other orders, long or non-ASCII strings, damage) still decodes or fails as before.

/// Stored in one order...
private struct Written: Codable {
    var id: UUID
    var title: String
    var pages: Int
    var published: Date
    var note: String?
}

/// ...and declared (and so asked for) in another.
private struct ReadBack: Codable, Equatable {
    var note: String?
    var published: Date
    var pages: Int
    var title: String
    var id: UUID
}

@Suite("Binary decoder fast paths")
struct BinaryDecodingFastPathTests {
    @Test func fieldsAskedForInAnotherOrderThanStoredDecode() throws {
        var generator = makeCodingTestGenerator("fields out of stored order")
        for round in 0..<200 {
            let written = Written(id: UUID(), title: "Title \(round)", pages: Int.random(in: -1_000_000...1_000_000, using: &generator),
                                  published: Date(timeIntervalSince1970: Double(round) * 3.5),
                                  note: round % 3 == 0 ? nil : String(repeating: "n", count: round % 40))
            let bytes = try BinaryInstanceEncoder().encode(written)
            // Decoded both ways on one thread, alternately, so the learned names and positions of
            // each key type are exercised across records.
            let back = try BinaryInstanceDecoder().decode(ReadBack.self, from: bytes)
            #expect(back == ReadBack(note: written.note, published: written.published, pages: written.pages, title: written.title, id: written.id))
            let again = try BinaryInstanceDecoder().decode(Written.self, from: bytes)
            #expect(again.id == written.id && again.title == written.title && again.note == written.note)
        }
    }

    @Test func stringsOfEveryShapeRoundTrip() throws {
        struct Text: Codable, Equatable { var text: String }
        var generator = makeCodingTestGenerator("string field shapes")
        var samples = ["", "a", "0123456789abcde", "0123456789abcdef", "é", "naïve café", "日本語", "a\u{0}b", "\u{7F}",
                       String(repeating: "x", count: 127), String(repeating: "y", count: 128), String(repeating: "z", count: 300)]
        for _ in 0..<300 {
            let count = Int.random(in: 0...20, using: &generator)
            samples.append(String(decoding: (0..<count).map { _ in UInt8.random(in: 0...0x7F, using: &generator) }, as: UTF8.self))
        }
        for sample in samples {
            let bytes = try BinaryInstanceEncoder().encode(Text(text: sample))
            #expect(try BinaryInstanceDecoder().decode(Text.self, from: bytes) == Text(text: sample))
        }
    }

    @Test func aShortStringWhoseLengthByteLiesIsStillDamage() throws {
        struct Text: Codable { var text: String }
        var bytes = try BinaryInstanceEncoder().encode(Text(text: "hello"))
        // The value is `[5]hello`: claim 4 bytes, so the length no longer fills the slot.
        let valueStart = try #require(bytes.firstIndex(of: 5))
        bytes[valueStart] = 4
        #expect(throws: DecodingError.self) { try BinaryInstanceDecoder().decode(Text.self, from: bytes) }
        // Non-ASCII bytes in a short slot go to the validating path and are rejected there.
        bytes[valueStart] = 5
        bytes[valueStart + 1] = 0xFF
        #expect(throws: DecodingError.self) { try BinaryInstanceDecoder().decode(Text.self, from: bytes) }
    }

    @Test func uuidFieldsAreTheirBytes() throws {
        #expect(BinarySpecialValues.uuidIsItsBytes)
        struct Tagged: Codable, Equatable { var id: UUID; var other: UUID? }
        var generator = makeCodingTestGenerator("uuid fields")
        for _ in 0..<200 {
            let raw = generator.bytes(count: 16)
            let id = UUID(uuid: (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                                 raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]))
            let value = Tagged(id: id, other: Bool.random(using: &generator) ? UUID() : nil)
            let back = try BinaryInstanceDecoder().decode(Tagged.self, from: BinaryInstanceEncoder().encode(value))
            #expect(back == value)
            #expect(back.id.uuidString == id.uuidString)
        }
    }

    @Test func containersWithMoreThan127FieldsTakeTheGeneralHeader() throws {
        // A `[String: Int]` is a keyed container; 200 entries need a two-byte count.
        let many = Dictionary(uniqueKeysWithValues: (0..<200).map { ("key\($0)", $0 * 7) })
        #expect(try BinaryInstanceDecoder().decode([String: Int].self, from: BinaryInstanceEncoder().encode(many)) == many)
        // A one-byte count that claims more fields than the bytes can hold is damage.
        struct Pair: Codable { var a: Int; var b: Int }
        var bytes = try BinaryInstanceEncoder().encode(Pair(a: 1, b: 2))
        bytes[0] = 100
        #expect(throws: DecodingError.self) { try BinaryInstanceDecoder().decode(Pair.self, from: bytes) }
    }

    @Test func stringKeysLentFromTheStackAreTheirOrderedKeyBytes() {
        var generator = makeCodingTestGenerator("string ordered key lending")
        var samples = ["", "a", "978-12345", "a\u{0}b", "\u{0}", "\u{0}\u{0}", "é", "e\u{301}", "日本語",
                       String(repeating: "q", count: 256), String(repeating: "q", count: 257), String(repeating: "\u{0}", count: 256)]
        for _ in 0..<300 {
            let count = Int.random(in: 0...40, using: &generator)
            samples.append(String(decoding: (0..<count).map { _ in UInt8.random(in: 0...0xFF, using: &generator) }, as: UTF8.self))
        }
        for sample in samples {
            var lent: [UInt8] = []
            sample.withOrderedKeyBytes { lent = Array($0) }
            #expect(lent == sample.orderedKeyBytes, "\(Array(sample.utf8))")
        }
    }

    @Test func skippingAnEscapedStringAgreesWithReadingIt() {
        var generator = makeCodingTestGenerator("escaped skip")
        for _ in 0..<5_000 {
            // Mostly well-formed strings, with zero bytes, truncations and stray bytes mixed in.
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                switch UInt8.random(in: 0...9, using: &generator) {
                case 0: bytes += [0, 0xFF]
                case 1: bytes.append(0)
                case 2: bytes.append(UInt8.random(in: 0...255, using: &generator))
                default: bytes.append(UInt8.random(in: 1...0x7F, using: &generator))
                }
            }
            if Bool.random(using: &generator) { bytes += [0, 0] }
            var reader = OrderedKeyReader(bytes)
            var skipper = OrderedKeyReader(bytes)
            let read = Result { try reader.readEscaped() }
            let skipped = Result { try skipper.skipEscaped() }
            switch (read, skipped) {
            case (.success, .success):
                #expect(reader.offset == skipper.offset)
            case let (.failure(readError), .failure(skipError)):
                #expect("\(readError)" == "\(skipError)", "\(bytes)")
            default:
                Issue.record("readEscaped and skipEscaped disagree on \(bytes)")
            }
            let end = bytes.withUnsafeBytes { OrderedKeyReader.escapedEnd(in: $0, from: 0) }
            if case .success = skipped { #expect(end == skipper.offset) } else { #expect(end == nil) }
        }
    }
}
