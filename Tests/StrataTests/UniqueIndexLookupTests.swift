import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

struct Label: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var code: String
    var alias: String
}

/// One unique index of each kind: `code` by reference (entry -> identifier -> primary get),
/// `alias` direct (the entry holds the instance).
struct LabelFormat: DatastoreFormat {
    static let name = "labels"
    typealias Instance = Label
    typealias Identifier = Int
    let code = OneToOneIndex(\.code)
    @Direct var alias = OneToOneIndex(\.alias)
}

/// A unique-index load seeks the first entry at or after the value's key and takes it only if it
/// is that value's: neighbours sharing a prefix, missing values before, between and after the
/// stored ones, and the index's last entry must each give the right answer.
@Suite struct UniqueIndexLookupTests {
    /// Values whose encodings share prefixes with each other and with the missing ones below.
    static let stored = ["a", "ab", "abc", "a\u{0}b", "b", "zz"]
    static let missing = ["", "0", "aa", "abcd", "a\u{0}", "ac", "z", "zzz", "\u{10FFFF}"]

    private func makeStore() throws -> (Store<ReadWrite>, Datastore<LabelFormat, ReadWrite>, [Label]) {
        let store = try Store.inMemory()
        let labels = try store.datastore(LabelFormat.self)
        // Identifiers in the opposite order of the values, so an index key's identifier suffix
        // never happens to sort like its value.
        let all = Self.stored.enumerated().map { Label(id: 100 - $0.offset, code: $0.element, alias: "alias-" + $0.element) }
        for label in all { try labels.persist(label) }
        return (store, labels, all)
    }

    @Test func storedValuesLoadTheirOwnInstance() throws {
        let (store, labels, all) = try makeStore()
        for label in all {
            #expect(try labels.load(label.code, from: \.code) == label, "code \(label.code.debugDescription)")
            #expect(try labels.load(label.alias, from: \.alias) == label, "alias \(label.alias.debugDescription)")
            let inTransaction = try store.read { tx in (try tx[labels].load(label.code, from: \.code), try tx[labels].load(label.alias, from: \.alias)) }
            #expect(inTransaction.0 == label)
            #expect(inTransaction.1 == label)
        }
    }

    @Test func missingValuesLoadNothingEvenBesidePrefixNeighbours() throws {
        let (store, labels, _) = try makeStore()
        for value in Self.missing {
            #expect(try labels.load(value, from: \.code) == nil, "code \(value.debugDescription)")
            #expect(try labels.load("alias-" + value, from: \.alias) == nil, "alias \(value.debugDescription)")
            let inTransaction = try store.read { tx in
                (try tx[labels].load(value, from: \.code), try tx[labels].load("alias-" + value, from: \.alias))
            }
            #expect(inTransaction.0 == nil)
            #expect(inTransaction.1 == nil)
        }
    }

    @Test func lastEntryAndEmptyIndex() throws {
        let store = try Store.inMemory()
        let labels = try store.datastore(LabelFormat.self)
        #expect(try labels.load("a", from: \.code) == nil)
        #expect(try labels.load("alias-a", from: \.alias) == nil)
        let last = Label(id: 1, code: "\u{10FFFF}", alias: "\u{10FFFF}")
        try labels.persist(last)
        #expect(try labels.load(last.code, from: \.code) == last)
        #expect(try labels.load(last.alias, from: \.alias) == last)
        #expect(try labels.load("\u{10FFFF}\u{10FFFF}", from: \.code) == nil)
        // Moving the value away leaves nothing under the old one.
        var moved = last
        moved.code = "m"
        try labels.persist(moved)
        #expect(try labels.load(last.code, from: \.code) == nil)
        #expect(try labels.load("m", from: \.code) == moved)
    }
}
