import Foundation
import Testing
import Strata
import StrataCore

/// An insert writes each index value straight into its reused key buffer, after the values of the
/// indexes before it, so a user's `encodeOrderedKey(into:)` gets a writer that already holds
/// bytes. A conformer that clears the writer (`removeAll()`) or replaces it loses those bytes: the
/// insert must throw a typed misuse error and write nothing, never trap or store wrong entries.
@Suite struct OrderedKeyMisbehavingWriterTests {
    /// A key whose encoding misbehaves as `mode` says (0 behaves).
    struct Odd: OrderedKey, Codable {
        var mode: Int
        var text: String

        func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
            switch mode {
            case 1:                       // clears, then writes more than was there
                writer.removeAll()
                String(repeating: "x", count: 200).encodeOrderedKey(into: &writer)
            case 2:                       // replaces the writer, then writes more than was there
                writer = OrderedKeyWriter()
                String(repeating: "y", count: 200).encodeOrderedKey(into: &writer)
            case 3:                       // clears and writes nothing (shorter than before)
                writer.removeAll()
            default:
                text.encodeOrderedKey(into: &writer)
            }
        }

        static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Odd {
            Odd(mode: 0, text: try String.decodeOrderedKey(from: &reader))
        }
    }

    struct Item: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var first: Odd
        var second: Odd
    }

    /// Two indexes of the misbehaving type: whichever the insert writes second finds the first's
    /// value in its writer.
    struct ItemFormat: DatastoreFormat {
        static let name = "odd-items"
        typealias Instance = Item
        typealias Identifier = Int
        let first = Index(\.first)
        let second = OneToOneIndex(\.second)
    }

    @Test func aConformerThatDropsEarlierBytesIsAMisuseError() throws {
        let store = try Store.inMemory()
        let items = try store.datastore(ItemFormat.self)
        let good = Item(id: 1, first: Odd(mode: 0, text: "a"), second: Odd(mode: 0, text: "b"))
        try items.persist(good)
        for mode in 1...3 {
            let bad = Item(id: 10 + mode, first: Odd(mode: mode, text: "c"), second: Odd(mode: mode, text: "d"))
            do {
                try items.persist(bad)
                Issue.record("mode \(mode): the insert was accepted")
            } catch StrataError.misuse(let message) {
                #expect(message.contains("encodeOrderedKey"), "\(message)")
            }
            // In one transaction with good writes around it: the refused insert wrote nothing.
            try store.write { tx in
                try tx[items].persist(Item(id: 100 + mode, first: Odd(mode: 0, text: "p\(mode)"), second: Odd(mode: 0, text: "q\(mode)")))
                #expect(throws: StrataError.self) { try tx[items].persist(bad) }
            }
            #expect(try items.load(bad.id) == nil)
        }
        #expect(try items.loadAll().map(\.id) == [1, 101, 102, 103])
        #expect(try items.load(Odd(mode: 0, text: "q2"), from: \.second)?.id == 102)
        #expect(try items.check().problems.isEmpty)
    }
}
