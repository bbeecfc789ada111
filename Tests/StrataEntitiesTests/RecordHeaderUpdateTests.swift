import Foundation
import Strata
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The write path's way of changing a header's current entry (`RecordHeader.setCurrent(name:
/// datestamp:sequence:body:)`: in place when the entry keeps its length, appended when its key
/// sorts last, spliced otherwise) against the general one (`setCurrent(_:)`), byte for byte.
@Suite struct RecordHeaderUpdateTests {
    static let keys = ["age", "born", "name", "score", "z"]

    static func value(_ random: inout SeededGenerator) -> EntityValue? {
        switch Int.random(in: 0..<6, using: &random) {
        case 0: nil
        case 1: .int(Int.random(in: -1_000...1_000, using: &random))
        case 2: .string(String(repeating: "x", count: Int.random(in: 0...3, using: &random)))
        // Longer than `inlineBodyLimit`: kept in the history only.
        case 3: .string(String(repeating: "y", count: Int.random(in: 120...140, using: &random)))
        case 4: .double(Double(Int.random(in: 0...9, using: &random)))
        default: .bool(Bool.random(using: &random))
        }
    }

    @Test func fastUpdateMatchesGeneralUpdate() throws {
        let seed = testSeed("fastHeaderUpdate")
        var random = SeededGenerator(seed: seed)
        for _ in 0..<200 {
            var fast = RecordHeader(isDeleted: false, created: Date(timeIntervalSinceReferenceDate: 0), modified: Date(timeIntervalSinceReferenceDate: 0),
                                    sequence: 1, type: "item")
            var general = fast
            for sequence in UInt64(2)..<UInt64(30) {
                let key = Self.keys.randomElement(using: &random)!
                let entry = PropertyEntry(Self.value(&random), datestamp: Date(timeIntervalSinceReferenceDate: Double(sequence)))
                var body = OrderedKeyWriter()
                entry.encodeBody(into: &body)
                let name = EntityLayout.encodedName(key)
                try body.bytes.withUnsafeBytes { try fast.setCurrent(name: name, datestamp: entry.datestamp, sequence: sequence, body: $0) }
                try general.setCurrent(RecordHeader.currentEntry(name: name, datestamp: entry.datestamp, sequence: sequence, body: body.bytes))
                #expect(fast.encoded() == general.encoded(), "seed \(seed), sequence \(sequence)")
            }
            // What was written decodes, with every key once and in order.
            let decoded = try fast.encoded().withUnsafeBytes { try RecordHeader($0) }
            #expect(decoded == general)
        }
    }
}
