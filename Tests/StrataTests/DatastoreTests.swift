import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

func sampleBooks() -> [Book] {
    [
        Book(title: "Dune", authors: ["Frank Herbert"], isbn: "isbn-1", shelf: 1),
        Book(title: "Emma", authors: ["Jane Austen"], isbn: "isbn-2", shelf: 2),
        Book(title: "Good Omens", authors: ["Terry Pratchett", "Neil Gaiman", "Terry Pratchett"], isbn: "isbn-3", shelf: 1),
        Book(title: "Anansi Boys", authors: ["Neil Gaiman"], isbn: "isbn-4", shelf: 3),
        Book(title: "Beloved", authors: ["Toni Morrison"], isbn: "isbn-5", shelf: 2),
        Book(title: "Dune", authors: ["Someone Else"], isbn: "isbn-6", shelf: 3),
    ]
}

@Suite struct DatastoreTests {
    @Test func reopenRoundTrip() throws {
        let dir = TemporaryDirectory()
        let books = sampleBooks()
        do {
            let store = try Store(at: dir.path)
            let datastore = try store.datastore(BookFormat.self)
            for book in books { #expect(try datastore.persist(book) == nil) }
            var changed = books[0]
            changed.title = "Dune Messiah"
            #expect(try datastore.persist(changed) == books[0])
        }
        let reader = try Store(at: dir.path, mode: .readOnly)
        let datastore = try reader.datastore(BookFormat.self)
        #expect(try datastore.count == books.count)
        #expect(try datastore.load(books[0].id)?.title == "Dune Messiah")
        #expect(try datastore.load(books[1].id) == books[1])
        #expect(try datastore.load(UUID()) == nil)
    }

    @Test func indexMatrix() throws {
        let store = try Store.inMemory()
        let datastore = try store.datastore(BookFormat.self)
        let books = sampleBooks()
        for book in books { try datastore.persist(book) }
        // One-to-one (direct): unique lookups.
        #expect(try datastore.load("isbn-3", from: \.isbn) == books[2])
        #expect(try datastore.load("isbn-404", from: \.isbn) == nil)
        // One-to-many: both "Dune"s, ordered by identifier.
        let dunes = try datastore.loadAll("Dune", from: \.title)
        #expect(Set(dunes.map(\.id)) == [books[0].id, books[5].id])
        #expect(dunes.map(\.id) == dunes.map(\.id).sorted { $0.orderedKeyBytes.lexicographicallyPrecedes($1.orderedKeyBytes) })
        // Many-to-many: duplicates inside one instance collapse; one hit per value in ranges.
        #expect(try datastore.loadAll("Terry Pratchett", from: \.authors).map(\.id) == [books[2].id])
        #expect(try datastore.loadAll("Neil Gaiman", from: \.authors).count == 2)
        #expect(try datastore.count("A"..."Z", from: \.authors) == 7)
        // Composite: equality on the shelf, range on the title.
        let shelfOne = try datastore.load(CompositeKey(1, "A")..<CompositeKey(1, "Z"), from: \.shelfTitle)
        #expect(shelfOne.map(\.title) == ["Dune", "Good Omens"])
        // Unique violation: nothing is written.
        var clash = Book(title: "Clash", authors: [], isbn: "isbn-1", shelf: 9)
        #expect(throws: DatastoreError.self) { try datastore.persist(clash) }
        #expect(try datastore.load(clash.id) == nil)
        #expect(try datastore.loadAll("Clash", from: \.title).isEmpty)
        clash.isbn = "isbn-7"
        try datastore.persist(clash)
        // Changing an indexed value moves the entry.
        clash.isbn = "isbn-8"
        try datastore.persist(clash)
        #expect(try datastore.load("isbn-7", from: \.isbn) == nil)
        #expect(try datastore.load("isbn-8", from: \.isbn)?.id == clash.id)
        // Deletes remove every entry.
        #expect(try datastore.delete(books[2].id) == books[2])
        #expect(try datastore.loadAll("Terry Pratchett", from: \.authors).isEmpty)
        #expect(try datastore.load("isbn-3", from: \.isbn) == nil)
        #expect(throws: DatastoreError.instanceNotFound(datastore: "books", id: "\(books[2].id)")) { try datastore.delete(books[2].id) }
        #expect(try datastore.deleteIfPresent(books[2].id) == nil)
        #expect(throws: DatastoreError.instanceExists(datastore: "books", id: "\(books[1].id)")) { try datastore.insert(books[1]) }
        // Delete by index range.
        #expect(try datastore.delete("A"..<"C", from: \.title) == 2) // Anansi Boys, Beloved
        #expect(try datastore.count == 4)
    }

    struct Numbered: Codable, Sendable, Identifiable, Equatable {
        var id: Int
        var group: Int8
        var score: Double
        var label: String
    }

    struct NumberedFormat: DatastoreFormat {
        static let name = "numbered"
        typealias Instance = Numbered
        typealias Identifier = Int
        let score = Index(\.score)
        let groupLabel = Index(\.group, \.label)
    }

    struct NeighbourFormat: DatastoreFormat {
        static let name = "numbered2" // shares a prefix with "numbered"
        typealias Instance = Numbered
        typealias Identifier = Int
        let score = Index(\.score)
    }

    @Test func rangeGrammarAcrossPageBoundaries() throws {
        let store = try Store.inMemory()
        let numbered = try store.datastore(NumberedFormat.self)
        let neighbour = try store.datastore(NeighbourFormat.self)
        try store.write { tx in
            for i in stride(from: 0, to: 400, by: 2) {
                let padding = String(repeating: "x", count: 300) // a few entries per page
                try tx[numbered].persist(Numbered(id: i, group: Int8(i % 3) - 1, score: Double(i) - 199.5, label: "item \(i) \(padding)"))
                try tx[neighbour].persist(Numbered(id: i + 1, group: 0, score: Double(i), label: "n"))
            }
        }
        func ids(_ instances: [Numbered]) -> [Int] { instances.map(\.id) }
        let evens = Array(stride(from: 0, to: 400, by: 2))
        #expect(ids(try numbered.load(10..<20)) == [10, 12, 14, 16, 18])
        #expect(ids(try numbered.load(10...20)) == [10, 12, 14, 16, 18, 20])
        #expect(ids(try numbered.load(IndexRange(lower: .excluding(10), upper: .including(20)))) == [12, 14, 16, 18, 20])
        #expect(ids(try numbered.load(390...)) == [390, 392, 394, 396, 398])
        #expect(ids(try numbered.load(..<6)) == [0, 2, 4])
        #expect(ids(try numbered.load(...6)) == [0, 2, 4, 6])
        #expect(ids(try numbered.loadAll()) == evens)
        #expect(ids(try numbered.loadAll(order: .descending)) == evens.reversed())
        #expect(ids(try numbered.load(100..<200, order: .descending, limit: 3)) == [198, 196, 194])
        #expect(ids(try numbered.load(11..<12)).isEmpty)
        #expect(ids(try numbered.load(-5..<0)).isEmpty)
        // Negative and positive doubles in index order.
        #expect(ids(try numbered.load(-2.0...1.0, from: \.score)) == [198, 200])
        #expect(ids(try numbered.load(..., from: \.score, limit: 2)) == [0, 2])
        #expect(ids(try numbered.load(..., from: \.score, order: .descending, limit: 2)) == [398, 396])
        // Composite: leading equality, trailing range, negative Int8 first.
        let groupMinusOne = try numbered.load(CompositeKey(Int8(-1), "")..<CompositeKey(Int8(0), ""), from: \.groupLabel)
        #expect(Set(ids(groupMinusOne)) == Set(evens.filter { $0 % 3 == 0 }))
        // Prefix isolation: the neighbouring datastore's entries never leak.
        #expect(try numbered.count == 200)
        #expect(try neighbour.count == 200)
        #expect(ids(try neighbour.load(0..<10)) == [1, 3, 5, 7, 9])
    }

    @Test func transactionsSpanDatastoresAndRollBack() throws {
        struct Refuse: Error {}
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let numbered = try store.datastore(NumberedFormat.self)
        let book = sampleBooks()[0]
        try store.write { tx in
            try tx[books].persist(book)
            try tx[numbered].persist(Numbered(id: 1, group: 0, score: 0, label: "one"))
        }
        #expect(throws: Refuse.self) {
            try store.write { tx in
                try tx[books].delete(book.id)
                try tx[numbered].persist(Numbered(id: 2, group: 0, score: 0, label: "two"))
                // A caught error inside does not abort; the thrown one does.
                do { try tx[books].insert(book) } catch {}
                throw Refuse()
            }
        }
        #expect(try books.load(book.id) == book)
        #expect(try numbered.load(2) == nil)
        let generation = store.database.generation
        // A read sees one snapshot across datastores.
        try store.read { (tx: StoreReadContext) throws in
            #expect(try tx[books].count == 1)
            #expect(try tx[numbered].count == 1)
            #expect(tx.generation == generation)
        }
    }

    @Test func cancelledAsyncWriteRollsBack() async throws {
        let store = try Store.inMemory()
        let numbered = try store.datastore(NumberedFormat.self)
        // The body signals once it has written, then holds the transaction open until the test
        // has cancelled: the cancellation lands mid-transaction however slow the machine is.
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let task = Task {
            try await store.write { tx in
                try tx[numbered].persist(Numbered(id: 7, group: 0, score: 0, label: "seven"))
                started.signal()
                release.wait()
            }
        }
        // Bounded: a write that never runs its body fails the test instead of hanging it.
        var hasStarted = false
        for _ in 0..<10_000 where !hasStarted {
            hasStarted = started.wait(timeout: .now()) == .success
            if !hasStarted { try await Task.sleep(nanoseconds: 1_000_000) }
        }
        try #require(hasStarted)
        task.cancel()
        release.signal()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await numbered.load(7) == nil)
        try await numbered.persist(Numbered(id: 8, group: 0, score: 0, label: "eight"))
        #expect(try await numbered.load(8)?.label == "eight")
    }

    @Test func migrationsByVersion() throws {
        let dir = TemporaryDirectory()
        let id = UUID()
        do {
            let old = try Store(at: dir.path)
            try old.datastore(BookFormatV1.self).persist(BookV1(id: id, title: "Old", author: "A. Writer", isbn: "isbn-old"))
        }
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        // Read-time migration.
        let migrated = try #require(try books.load(id))
        #expect(migrated.authors == ["A. Writer"] && migrated.shelf == 0)
        // New indexes are not built yet for the old data.
        #expect(books.indexesNeedingBuild.contains("title"))
        #expect(throws: DatastoreError.indexNotBuilt(datastore: "books", index: "title")) { try books.loadAll("Old", from: \.title) }
        var events: [DatastoreProgress] = []
        try books.warm { events.append($0) }
        #expect(events.first == .evaluating && events.last == .complete(total: 1))
        #expect(try books.loadAll("Old", from: \.title).map(\.id) == [id])
        #expect(try books.load("isbn-old", from: \.isbn)?.id == id)
        // Bulk rewrite in the current version.
        #expect(try books.migrate() == 1)
        #expect(try books.migrate() == 0)
        // An old build refuses data written by the newer version instead of misreading it.
        let oldReader = try Store(at: dir.path + "", mode: .readOnly)
        #expect(throws: DatastoreError.versionTooNew(datastore: "books", stored: "2", newestKnown: "1")) {
            _ = try oldReader.datastore(BookFormatV1.self).load(id)
        }
    }

    @Test func jsonCodingOption() throws {
        struct JSONFormat: DatastoreFormat {
            static let name = "json"
            enum Version: String, DatastoreVersion { case first = "2026-01" }
            static let currentVersion = Version.first
            static var coding: InstanceCoding { .json }
            typealias Instance = Book
            typealias Identifier = UUID
        }
        let store = try Store.inMemory()
        let datastore = try store.datastore(JSONFormat.self)
        let book = sampleBooks()[2]
        try datastore.persist(book)
        #expect(try datastore.load(book.id) == book)
        let raw = try store.database.read { tx in try tx.get(book.id.orderedKeyBytes, in: tx.tree("json"))?.bytes }
        #expect(String(decoding: try #require(raw), as: UTF8.self).contains("\"title\":\"Good Omens\""))
    }

    @Test func observationInProcess() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let all = sampleBooks()
        var everything = books.changes().makeAsyncIterator()
        var emmaOnly = try books.changes(in: "E"..<"F", from: \.title).makeAsyncIterator()

        try await books.persist(all[0])
        guard case .created(let id, let created)? = try await everything.next() else { Issue.record("expected created"); return }
        #expect(id == all[0].id && created == all[0])
        var updated = all[0]
        updated.title = "Dune (2nd)"
        try await books.persist(updated)
        guard case .updated(_, let before, let after)? = try await everything.next() else { Issue.record("expected updated"); return }
        #expect(before.title == "Dune" && after.title == "Dune (2nd)")
        try await store.write { tx in _ = try tx[books].delete(all[0].id) }
        guard case .deleted(_, let old)? = try await everything.next() else { Issue.record("expected deleted"); return }
        #expect(old == updated)
        try await books.persist(all[1])
        #expect(try await everything.next()?.id == all[1].id)
        // The range observer only hears about Emma (Dune came and went before it looked: its
        // changes coalesce to nothing).
        guard case .created(_, let emma)? = try await emmaOnly.next() else { Issue.record("expected Emma"); return }
        #expect(emma.title == "Emma")
        // An id observer ignores other instances.
        var oneBook = books.changes(for: all[3].id).makeAsyncIterator()
        try await books.persist(all[4])
        try await books.persist(all[3])
        #expect(try await oneBook.next()?.id == all[3].id)
    }
}

@Suite(.serialized) struct CrossProcessDatastoreTests {
    @Test func readerProcessLoadsAndObservesWhatTheWriterPersists() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        let all = sampleBooks()
        try await books.persist(all[0])
        let child = try ChildProcess(["typed-observe", dir.path, "3"])
        #expect(child.waitFor("ready") == "ready 1")
        try await books.persist(all[1])
        #expect(child.waitFor("created") == "created Emma")
        var renamed = all[0]
        renamed.title = "Dune Messiah"
        try await books.persist(renamed)
        #expect(child.waitFor("updated") == "updated Dune -> Dune Messiah")
        try await store.write { tx in _ = try tx[books].delete(all[1].id) }
        #expect(child.waitFor("deleted") == "deleted Emma")
        #expect(child.waitFor("titles") == "titles Dune Messiah")
        #expect(child.waitForExit() == 0)
    }
}

@Suite struct DatastoreStreamTests {
    @Test func rangeLoadsAsAsyncSequences() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        for book in sampleBooks() { try await books.persist(book) }
        var titles: [String] = []
        for try await book in books.stream("A"..<"E", from: \.title) { titles.append(book.title) }
        #expect(titles == ["Anansi Boys", "Beloved", "Dune", "Dune"])
        var count = 0
        for try await _ in books.streamAll() { count += 1 }
        #expect(count == 6)
        var first: Book?
        for try await book in books.stream(..., from: \.title, order: .descending) { first = book; break }
        #expect(first?.title == "Good Omens")
    }
}
