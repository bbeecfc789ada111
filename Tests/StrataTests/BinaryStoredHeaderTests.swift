import Foundation
@testable import Strata
import Testing

// A field in stored order is found by comparing its stored header, `[key length][key]`, with the
// one the key-name table learned (`BinaryShortPrefix`, `BinaryKeyedFieldScanner.nextValue(ifKeyHeaderIs:)`).
// These check that every case the header compare does not take (long keys, long values, a record
// ending within 8 bytes of a field, keys that share a beginning, another order, another layout on
// the next record, damage) still decodes exactly, or fails as damage, through the general look-up.

private struct Mixed: Codable, Equatable {
    var a: Bool
    var ab: Int
    var abc: String
    var seventeenCharName: Int        // 17 bytes: an 18-byte header, not word-comparable
    var fifteenCharName: String       // 15 bytes: a 16-byte header, two overlapping words
    var sevenCh: String               // 7 bytes: an 8-byte header, one word
}

private struct Tiny: Codable, Equatable {
    var z: Bool
}

/// `Mixed` without two fields and with one more: a record of another version.
private struct MixedOtherVersion: Codable, Equatable {
    var ab: Int
    var extra: String
    var abc: String
    var fifteenCharName: String
}

private struct MixedReadingOtherVersion: Codable, Equatable {
    var a: Bool?
    var ab: Int
    var abc: String
    var seventeenCharName: Int?
    var fifteenCharName: String
    var sevenCh: String?
}

@Suite("Binary decoder stored-header look-ups")
struct BinaryStoredHeaderTests {
    private let encoder = BinaryInstanceEncoder()
    private let decoder = BinaryInstanceDecoder()

    @Test func theShortPrefixAgreesWithAByteCompareAtEveryLength() {
        var generator = makeCodingTestGenerator("short prefix")
        for count in 0...20 {
            let string = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let prefix = BinaryShortPrefix(string)
            #expect(prefix.isComparable == (1...16).contains(count))
            guard prefix.isComparable else { continue }
            // Padded so that an 8-byte load at the start stays inside.
            let buffer = string + [UInt8](repeating: 0xA5, count: 8)
            #expect(buffer.withUnsafeBytes { prefix.matches(at: $0.baseAddress!) })
            for position in 0..<count {
                var changed = buffer
                changed[position] ^= UInt8.random(in: 1...255, using: &generator)
                #expect(!changed.withUnsafeBytes { prefix.matches(at: $0.baseAddress!) })
            }
        }
    }

    @Test func keysOfEveryHeaderShapeRoundTripRepeatedly() throws {
        // Repeated: the first decode learns the names, the later ones take the header compare.
        for round in 0..<4 {
            let value = Mixed(a: round % 2 == 0, ab: -round, abc: "abc\(round)", seventeenCharName: round * 1000,
                              fifteenCharName: String(repeating: "é", count: round), sevenCh: String(repeating: "v", count: 200 + round))
            #expect(try decoder.decode(Mixed.self, from: try encoder.encode(value)) == value)
        }
    }

    @Test func aFieldEndingTheRecordWithinEightBytesDecodes() throws {
        // [1 field][1]["z"][1][value]: 5 bytes, so the field's header cannot be loaded as a word.
        for value in [Tiny(z: true), Tiny(z: false)] {
            let bytes = try encoder.encode(value)
            #expect(bytes.count < 8)
            #expect(try decoder.decode(Tiny.self, from: bytes) == value)
            #expect(try decoder.decode(Tiny.self, from: bytes) == value)
        }
    }

    @Test func recordsOfTwoLayoutsAlternateOnOneThread() throws {
        let current = Mixed(a: true, ab: 7, abc: "x", seventeenCharName: 9, fifteenCharName: "f", sevenCh: "s")
        let older = MixedOtherVersion(ab: 8, extra: "ignored", abc: "y", fifteenCharName: "g")
        let currentBytes = try encoder.encode(current)
        let olderBytes = try encoder.encode(older)
        for _ in 0..<3 {
            #expect(try decoder.decode(MixedReadingOtherVersion.self, from: currentBytes)
                    == MixedReadingOtherVersion(a: true, ab: 7, abc: "x", seventeenCharName: 9, fifteenCharName: "f", sevenCh: "s"))
            #expect(try decoder.decode(MixedReadingOtherVersion.self, from: olderBytes)
                    == MixedReadingOtherVersion(a: nil, ab: 8, abc: "y", seventeenCharName: nil, fifteenCharName: "g", sevenCh: nil))
        }
    }

    @Test func aMatchingHeaderWithADamagedValueLengthIsDamage() throws {
        let value = Mixed(a: true, ab: 1, abc: "abc", seventeenCharName: 2, fifteenCharName: "f", sevenCh: "s")
        _ = try decoder.decode(Mixed.self, from: try encoder.encode(value)) // learn the names
        var bytes = try encoder.encode(value)
        // The entry of `abc`: [3]["abc"][value length]...; make its value length run past the end.
        let header: [UInt8] = [3] + Array("abc".utf8)
        let at = try #require((0...(bytes.count - header.count)).first { Array(bytes[$0..<$0 + header.count]) == header })
        bytes[at + header.count] = 0x7F
        #expect(throws: DecodingError.self) { try decoder.decode(Mixed.self, from: bytes) }
        // And the thread's decoder still reads good records afterwards.
        #expect(try decoder.decode(Mixed.self, from: try encoder.encode(value)) == value)
    }
}
