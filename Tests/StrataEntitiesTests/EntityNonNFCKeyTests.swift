import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// Property keys that are not in NFC: a header keeps its current entries sorted by the encoded
/// key (the NFC bytes), which for such keys is not the order of Swift's `<` (not even a
/// consistent order there), so a create must place its keys by their encodings.
@Suite struct EntityNonNFCKeyTests {
    /// Swift's `<` orders "e\u{323}" < "e\u{323}\u{327}" < "e\u{323}\u{327}\u{327}", while NFC
    /// (which puts the cedilla before the dot below) orders the second first; the others are
    /// decomposed, composed-equivalent or Hangul keys and plain ones among them.
    static let marks = ["e\u{323}", "e\u{323}\u{327}", "e\u{323}\u{327}\u{327}"]
    static let others = ["c\u{327}", "\u{E7}a", "\u{E9}", "o\u{308}\u{304}", "\u{1100}\u{1161}\u{11A8}", "\u{AC01}x", "\u{212B}",
                         "a", "plain", "z"]

    /// Each key with its value, in one write, as every path reads it: the record, each key
    /// alone, a lookup by each key and value (which must find the entity, not create another).
    static func expectAll(_ tx: EntityReadContext, _ id: EntityID, _ values: [String: EntityValue]) throws {
        let record = try #require(try tx.record(.id(id)))
        #expect(record.properties.count == values.count)
        for (key, value) in values {
            #expect(record.properties[key]?.value == value, "\(key.unicodeScalars.map(\.value))")
            #expect(try tx.record(.id(id), keys: [key])?[key] == value, "\(key.unicodeScalars.map(\.value))")
            #expect(try tx.entities(where: key, equals: value) == [id], "\(key.unicodeScalars.map(\.value))")
        }
    }

    @Test(arguments: [marks, marks + others, others])
    func keysOutOfStringOrderAreCreatedInKeyOrder(keys: [String]) throws {
        #expect(Set(keys).count == keys.count)
        // The case the create path got wrong: `<` and the encodings disagree.
        #expect("e\u{323}" < "e\u{323}\u{327}")
        #expect(EntityLayout.encodedName("e\u{323}\u{327}").lexicographicallyPrecedes(EntityLayout.encodedName("e\u{323}")))
        let directory = TemporaryDirectory("entities")
        var store: EntityStore<ReadWrite>? = try EntityStore(at: directory.path)
        var values: [String: EntityValue] = [:]
        for (index, key) in keys.enumerated() { values[key] = .int(index) }
        let id = try store!.writeNow { tx in
            let id = try #require(try tx.resolve([.new("thing", with: values)]).values.first)
            try Self.expectAll(tx, id, values)
            // A get-or-create by each key finds the entity.
            for (key, value) in values {
                let reference = EntityReference.whereKey(key, equals: value, ofType: "thing").createIfMissing()
                #expect(try tx.resolve([reference])[reference] == id, "\(key.unicodeScalars.map(\.value))")
            }
            #expect(tx.createdEntities == [id])
            // Set again, by the decomposed form of each key (canonically equivalent: the same property).
            for (key, value) in values {
                guard case .int(let number) = value else { continue }
                try tx.set([key.decomposedStringWithCanonicalMapping: .int(number + 100)], of: [.id(id)])
            }
            values = values.mapValues { if case .int(let number) = $0 { .int(number + 100) } else { $0 } }
            try Self.expectAll(tx, id, values)
            for key in keys { #expect(try tx.history(of: .id(id), key: key).count == 2, "\(key.unicodeScalars.map(\.value))") }
            return id
        }
        store = nil
        store = try EntityStore(at: directory.path)
        #expect(try store!.database.check().problems.isEmpty)
        try store!.readNow { (tx: EntityReadContext) throws in try Self.expectAll(tx, id, values) }
        // Still writable: each key set once more, by its composed form.
        try store!.writeNow { tx in
            for (key, value) in values {
                guard case .int(let number) = value else { continue }
                try tx.set([key.precomposedStringWithCanonicalMapping: .int(number + 100)], of: [.id(id)])
            }
        }
        values = values.mapValues { if case .int(let number) = $0 { .int(number + 100) } else { $0 } }
        try store!.readNow { (tx: EntityReadContext) throws in
            try Self.expectAll(tx, id, values)
            for key in keys { #expect(try tx.history(of: .id(id), key: key).count == 3, "\(key.unicodeScalars.map(\.value))") }
        }
        #expect(try store!.database.check().problems.isEmpty)
    }
}
