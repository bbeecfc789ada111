import Foundation
import Strata
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The write path's way of changing a header's current entry (`RecordHeader.locateCurrent`,
/// `withCurrentEntry(at:_:)`, `setCurrent(name:datestamp:sequence:body:at:)`: in place when the
/// entry keeps its length, appended when its key sorts last, spliced otherwise), checked after
/// every step against a plain model of each key's current entry (datestamp, sequence, body).
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

    /// The current entry of one key, as the model keeps it (the whole body, however long).
    typealias ModelEntry = (datestamp: Date, sequence: UInt64, body: [UInt8])

    static func body(of entry: PropertyEntry) -> [UInt8] {
        var body = OrderedKeyWriter()
        entry.encodeBody(into: &body)
        return body.bytes
    }

    /// Checks that `header`'s current entries, decoded from its stored form, are the model's
    /// (in key order; a body longer than `inlineBodyLimit` is not kept in the header).
    static func expectMatches(_ header: RecordHeader, _ model: [String: ModelEntry], _ context: String) throws {
        var bytes: [UInt8] = []
        header.encode(into: &bytes)
        let decoded = try bytes.withUnsafeBytes { try RecordHeader($0) }
        #expect(decoded == header, "\(context)")
        let expected = model.map { key, entry in
            RecordHeader.CurrentEntry(name: EntityLayout.encodedName(key), datestamp: entry.datestamp, sequence: entry.sequence,
                                      body: entry.body.count <= RecordHeader.inlineBodyLimit ? entry.body : nil)
        }.sorted { $0.name.lexicographicallyPrecedes($1.name) }
        #expect(try decoded.currentEntries() == expected, "\(context)")
    }

    @Test func updatesMatchModel() throws {
        let seed = testSeed("headerUpdateModel")
        var random = SeededGenerator(seed: seed)
        for round in 0..<200 {
            var header = RecordHeader(isDeleted: false, created: Date(timeIntervalSinceReferenceDate: 0), modified: Date(timeIntervalSinceReferenceDate: 0),
                                      sequence: 1, type: "item")
            var model: [String: ModelEntry] = [:]
            for sequence in UInt64(2)..<UInt64(30) {
                let key = Self.keys.randomElement(using: &random)!
                let entry = PropertyEntry(Self.value(&random), datestamp: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...40, using: &random))))
                let body = Self.body(of: entry)
                let name = EntityLayout.encodedName(key)
                let context = "seed \(seed), round \(round), sequence \(sequence)"
                // The entry it replaces, as the write path reads it before the change.
                let located = try header.locateCurrent(named: name)
                #expect(located.found == (model[key] != nil), "\(context)")
                let previous = try header.withCurrentEntry(at: located) { $0.map { ($0.datestamp, $0.sequence, $0.body.map { Array($0) }) } }
                #expect(previous?.0 == model[key]?.datestamp && previous?.1 == model[key]?.sequence, "\(context)")
                if let stored = model[key] {
                    #expect(previous?.2 == (stored.body.count <= RecordHeader.inlineBodyLimit ? stored.body : nil), "\(context)")
                }
                body.withUnsafeBytes { header.setCurrent(name: name, datestamp: entry.datestamp, sequence: sequence, body: $0, at: located) }
                model[key] = (entry.datestamp, sequence, body)
                try Self.expectMatches(header, model, context)
            }
        }
    }

    /// Through the write context: an entry dated before the key's current entry goes into the
    /// history but leaves the current entry as it was; one dated the same or later replaces it.
    @Test func olderEntriesThroughTheWriteContextStayInTheHistory() throws {
        let seed = testSeed("headerUpdateOlder")
        var random = SeededGenerator(seed: seed)
        let store = try EntityStore.inMemory()
        let reference = EntityReference.new("item")
        let id = try #require(try store.writeNow { try $0.resolve([reference])[reference] })
        // Each entry appended takes the next sequence after the creation's (one entity, one writer).
        var sequence = try #require(try store.readNow { try $0.header(id) }).sequence
        var model: [String: ModelEntry] = [:]
        // First a fixed older-after-newer pair, then random datestamps.
        var steps: [(key: String, entry: PropertyEntry)] = [
            ("name", PropertyEntry(.string("new"), datestamp: Date(timeIntervalSinceReferenceDate: 10))),
            ("name", PropertyEntry(.string("old"), datestamp: Date(timeIntervalSinceReferenceDate: 5))),
        ]
        for _ in 0..<60 {
            steps.append((Self.keys.randomElement(using: &random)!,
                          PropertyEntry(Self.value(&random), datestamp: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...20, using: &random))))))
        }
        var index = 0
        while index < steps.count {
            // One to three entries per transaction.
            let batch = steps[index..<min(steps.count, index + Int.random(in: 1...3, using: &random))]
            try store.writeNow { tx in
                for step in batch { try tx.add([step.key: [step.entry]], to: .id(id)) }
            }
            for step in batch {
                sequence += 1
                if let current = model[step.key], current.datestamp > step.entry.datestamp { continue }
                model[step.key] = (step.entry.datestamp, sequence, Self.body(of: step.entry))
            }
            index += batch.count
            let header = try #require(try store.readNow { try $0.header(id) })
            try Self.expectMatches(header, model, "seed \(seed), step \(index)")
        }
    }
}
