import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

struct Note: Codable, Identifiable, Sendable, Equatable {
    var id: UUID
    var text: String
}

struct NoteFormat: DatastoreFormat {
    static let name = "notes"
    typealias Instance = Note
    typealias Identifier = UUID
    let text = Index(\.text)
}

private func byKey(_ ids: [UUID]) -> [UUID] {
    ids.sorted { $0.orderedKeyBytes.lexicographicallyPrecedes($1.orderedKeyBytes) }
}

@Suite struct DatastoreConvenienceTests {
    @Test func identifiersInOrderWithoutDecoding() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let sample = sampleBooks()
        for book in sample { try books.persist(book) }
        let sorted = byKey(sample.map(\.id))
        #expect(try books.identifiers() == sorted)
        #expect(try books.identifiers(order: .descending) == sorted.reversed())
        #expect(try books.identifiers(limit: 2) == Array(sorted.prefix(2)))
        #expect(try books.identifiers(sorted[1]..<sorted[4]) == Array(sorted[1..<4]))
        #expect(try books.identifiers(sorted[2]..., order: .descending, limit: 2) == [sorted[5], sorted[4]])
        #expect(try store.read { try $0[books].identifiers(...sorted[1]) } == Array(sorted.prefix(2)))
    }

    @Test func deleteAllEmptiesInstancesAndIndexes() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        for book in sampleBooks() { try books.persist(book) }
        #expect(try books.deleteAll() == 6)
        #expect(try books.count == 0)
        #expect(try books.load(..., from: \.title).isEmpty)
        #expect(try books.load("isbn-1", from: \.isbn) == nil)
        #expect(try books.deleteAll() == 0)
        // The datastore still works: unique indexes do not remember deleted values.
        try books.persist(sampleBooks()[0])
        #expect(try books.count == 1)
    }

    @Test func deleteAllIsLoggedForObservers() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        for book in sampleBooks() { try books.persist(book) }
        let before = store.database.generation
        try books.deleteAll()
        // The change log of the deleting commit names every identifier once, as a deletion.
        let logged = try store.database.read { tx -> [UInt8] in
            var kinds: [UInt8] = []
            try tx.scan(try tx.tree("books#log"), from: withUnsafeBytes(of: (before + 1).bigEndian) { Array($0) }) { _, value in
                kinds.append(value[0])
                return true
            }
            return kinds
        }
        #expect(logged == Array(repeating: 3, count: 6))
    }

    @Test func generatedIdentifiers() throws {
        let store = try Store.inMemory()
        let notes = try store.datastore(NoteFormat.self)
        let first = try notes.persist(generatingID: { Note(id: $0, text: "one") })
        let second = try store.write { try $0[notes].persist(generatingID: { Note(id: $0, text: "two") }) }
        #expect(first.id != second.id)
        #expect(try notes.load(first.id) == first)
        #expect(try notes.loadAll("two", from: \.text) == [second])
        // A builder that ignores the generated id and reuses a taken one is refused.
        #expect(throws: DatastoreError.instanceExists(datastore: "notes", id: "\(first.id)")) {
            try notes.persist(generatingID: { _ in Note(id: first.id, text: "clash") })
        }
        #expect(try notes.load(first.id)?.text == "one")
    }

    @Test func storeCountRemoveAndClear() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let notes = try store.datastore(NoteFormat.self)
        for book in sampleBooks() { try books.persist(book) }
        for text in ["a", "b", "c"] { try notes.persist(generatingID: { Note(id: $0, text: text) }) }
        #expect(try store.datastoreNames() == ["books", "notes"])
        #expect(try store.count() == 9)

        #expect(try store.removeDatastore(named: "notes"))
        #expect(try store.removeDatastore(named: "notes") == false)
        #expect(try store.datastoreNames() == ["books"])
        #expect(try store.count() == 6)
        #expect(try store.database.read { try $0.treeNames() }.allSatisfy { $0 == "books" || $0.hasPrefix("books#") })
        let reopened = try store.datastore(NoteFormat.self)
        #expect(try reopened.count == 0)
        #expect(reopened.indexesNeedingBuild.isEmpty)
        try reopened.persist(generatingID: { Note(id: $0, text: "d") })

        #expect(try store.clear() == 7)
        #expect(try store.count() == 0)
        #expect(try store.datastoreNames() == ["books", "notes"])
        #expect(try books.load("isbn-2", from: \.isbn) == nil)
    }
}

@Suite struct ChangeLogTests {
    /// With no reader pinning it, the log keeps about `ChangeLogTrimming.retention` generations: older entries
    /// are trimmed in batches, the newest stay.
    @Test func logIsTrimmedToItsRetention() throws {
        let store = try Store.inMemory()
        let notes = try store.datastore(NoteFormat.self)
        let id = UUID()
        for i in 0..<1200 { try notes.persist(Note(id: id, text: "\(i)")) }
        let (first, last, count) = try store.database.read { tx -> (UInt64, UInt64, Int) in
            let log = try tx.tree("notes#log")
            let cursor = try tx.cursor(log)
            _ = try cursor.first()
            let first = try cursor.key().withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
            _ = try cursor.last()
            let last = try cursor.key().withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
            return (first, last, try tx.count(log))
        }
        #expect(last == store.database.generation)
        #expect(first > 1, "nothing was trimmed")
        #expect(last - first >= 1024 && last - first < 1024 + 64 + 1, "kept generations \(first)...\(last)")
        #expect(count == Int(last - first + 1))
    }
}
