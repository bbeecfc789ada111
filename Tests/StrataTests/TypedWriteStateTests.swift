import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

/// The state the typed write path keeps between calls: the writer `tx[datastore]` caches for its
/// context, and what the change-log appender knows without reading the log (its sequence within
/// a commit, the store's memory of each log's oldest generation). Each test checks that this
/// state never outlives what it describes: a body's end, a rolled-back savepoint, a removed
/// datastore, a reader pinning old entries.
@Suite struct TypedWriteStateTests {
    private struct Note: Codable, Identifiable, Sendable, Equatable {
        var id: UUID
        var text: String
    }

    private struct NoteFormat: DatastoreFormat {
        static let name = "notes"
        typealias Instance = Note
        typealias Identifier = UUID
        let text = Index(\.text)
    }

    /// The (generation, sequence) keys and identifiers of `log`'s entries of `generation`.
    private static func logEntries(_ log: String, of generation: UInt64, in store: Store<ReadWrite>) throws -> [(sequence: UInt32, id: UUID)] {
        try store.database.read { tx in
            var entries: [(UInt32, UUID)] = []
            try tx.scan(try tx.tree(log), from: withUnsafeBytes(of: generation.bigEndian) { Array($0) }) { key, value in
                let bytes = key.bytes
                guard UInt64(bigEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }) == generation else { return false }
                let sequence = UInt32(bigEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self) })
                entries.append((sequence, try UUID(orderedKeyBytes: Array(value.bytes.dropFirst()))))
                return true
            }
            return entries
        }
    }

    /// The generations of the first and last entries of `log`.
    private static func logSpan(_ log: String, in store: Store<ReadWrite>) throws -> (first: UInt64, last: UInt64) {
        try store.database.read { tx in
            let cursor = try tx.cursor(try tx.tree(log))
            _ = try cursor.first()
            let first = try cursor.key().withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
            _ = try cursor.last()
            let last = try cursor.key().withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
            return (first, last)
        }
    }

    /// `tx[books]` hands out one writer per datastore while the body runs, and nothing keeps the
    /// context or the writer alive once the body has ended (the cached writer holds its context).
    @Test func writerIsReusedWhileTheBodyRunsAndReleasedAfter() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let notes = try store.datastore(NoteFormat.self)
        weak var weakWriter: DatastoreWriter<BookFormat>?
        weak var weakContext: StoreWriteContext?
        try store.write { tx in
            let first = tx[books]
            #expect(tx[books] === first)
            try tx[notes].persist(Note(id: UUID(), text: "between"))
            // Another datastore in between: a writer of the right type, whichever object it is.
            try tx[books].persist(Book(title: "Dune", authors: [], isbn: "isbn-1", shelf: 1))
            // The writer cached last (the one above was replaced when `notes` came in between).
            weakWriter = tx[books]
            #expect(weakWriter != nil)
            weakContext = tx
        }
        #expect(weakWriter == nil, "the cached writer outlived its transaction")
        #expect(weakContext == nil, "the context outlived its transaction")
        #expect(try books.count == 1)
        #expect(try notes.count == 1)
    }

    /// A writer kept past its body refuses to write (the transaction is over): a typed error,
    /// never a crash, and the writer is not cached by the finished context.
    @Test func writerKeptPastItsBodyThrows() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        var escaped: StoreWriteContext?
        try store.write { tx in escaped = tx }
        let context = try #require(escaped)
        #expect(context[books] !== context[books], "a finished context cached a writer")
        #expect(throws: StrataError.self) { try context[books].persist(Book(title: "Late", authors: [], isbn: "isbn-9", shelf: 0)) }
        #expect(try books.count == 0)
    }

    /// The sequence of a commit's log entries restarts where the log says after a savepoint that
    /// appended and rolled back, first or after appends outside it: the keys stay dense and
    /// every kept change is logged once, in order.
    @Test func logSequenceFollowsRolledBackSavepoints() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let made = (0..<5).map { Book(title: "T\($0)", authors: [], isbn: "isbn-\($0)", shelf: $0) }
        try store.write { tx in
            _ = try? tx.savepoint {
                try tx[books].persist(made[0])
                throw CancellationError()
            }
            try tx[books].persist(made[1])
            _ = try? tx.savepoint {
                try tx[books].persist(made[2])
                try tx.savepoint { try tx[books].persist(made[3]) }
                throw CancellationError()
            }
            try tx.savepoint { try tx[books].persist(made[4]) }
        }
        let entries = try Self.logEntries("books#log", of: store.database.generation, in: store)
        #expect(entries.map(\.sequence) == [0, 1])
        #expect(entries.map(\.id) == [made[1].id, made[4].id])
        #expect(try books.loadAll().count == 2)
        #expect(try store.database.check().problems.isEmpty)
    }

    /// Everything deleted inside a savepoint that rolls back, then more writes through the same
    /// cached writer: indexes, log and observers see exactly the kept changes.
    @Test func cachedWriterAfterARolledBackDeleteAll() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let first = Book(title: "Dune", authors: ["Frank Herbert"], isbn: "isbn-1", shelf: 1)
        try await books.persist(first)
        var changes = books.changes().makeAsyncIterator()
        let draft = Book(title: "Emma", authors: ["Jane Austen"], isbn: "isbn-2", shelf: 2)
        var second = draft
        second.shelf = 5
        try await store.write { [second] tx in
            let writer = tx[books]
            _ = try? tx.savepoint {
                #expect(try writer.deleteAll() == 1)
                try writer.persist(Book(title: "Gone", authors: [], isbn: "isbn-1", shelf: 3))
                throw CancellationError()
            }
            try writer.persist(draft)
            try tx[books].persist(second)
        }
        #expect(try books.load("isbn-1", from: \.isbn) == first)
        #expect(try books.load("isbn-2", from: \.isbn) == second)
        #expect(try books.loadAll("Emma", from: \.title) == [second])
        let entries = try Self.logEntries("books#log", of: store.database.generation, in: store)
        #expect(entries.map(\.sequence) == [0, 1] && entries.allSatisfy { $0.id == second.id })
        guard case .created(let id, let created)? = try await changes.next() else { Issue.record("expected created"); return }
        #expect(id == second.id && created == second)
        #expect(try store.database.check().problems.isEmpty)
    }

    /// Random writes of instances whose indexed values come from small sets (so values repeat,
    /// change, stay and clash): after every transaction the datastore's own check (every index
    /// entry the instances call for, and no other) is clean and the contents match a model. Covers
    /// each way the write path diffs index values: one value (`title`), one value and direct
    /// (`isbn`, unique), many values (`authors`) and a composite (`shelf`, `title`).
    @Test func randomWritesKeepEveryIndexExact() throws {
        var random = SeededGenerator(seed: testSeed("randomWritesKeepEveryIndexExact"))
        func pick(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let ids = (0..<8).map { _ in UUID() }
        let names = ["Austen", "Brontë", "Eliot"]
        var model: [UUID: Book] = [:]
        for _ in 0..<150 {
            try store.write { tx in
                for _ in 0..<(1 + pick(4)) {
                    let id = ids[pick(ids.count)]
                    if pick(5) == 0 {
                        let removed = try tx.savepoint { try tx[books].deleteIfPresent(id) }
                        let expected = model.removeValue(forKey: id)
                        #expect(removed == expected)
                        continue
                    }
                    let book = Book(id: id, title: "T\(pick(4))", authors: names.filter { _ in pick(2) == 0 }, isbn: "isbn-\(pick(6))",
                                    shelf: pick(3))
                    let clash = model.values.contains { $0.id != id && $0.isbn == book.isbn }
                    do {
                        try tx.savepoint { _ = try tx[books].persist(book) }
                        #expect(!clash, "\(book.isbn) was taken, yet the write went through")
                        model[id] = book
                    } catch DatastoreError.uniqueIndexViolation {
                        #expect(clash, "\(book.isbn) was free, yet the write was refused")
                    }
                }
            }
            let report = try books.check()
            #expect(report.isClean, "\(report.problems)")
            #expect(try Dictionary(uniqueKeysWithValues: books.loadAll().map { ($0.id, $0) }) == model)
        }
        for book in model.values { #expect(try books.load(book.isbn, from: \.isbn) == book) }
    }

    /// The trim memory never keeps a log from being trimmed: entries a reader pins stay while it
    /// reads, and go at the first commit after it ends.
    @Test func trimMemoryWaitsForReadersAndNoLonger() throws {
        let store = try Store.inMemory()
        let notes = try store.datastore(NoteFormat.self)
        let id = UUID()
        try notes.persist(Note(id: id, text: "start"))
        let pinned = try store.database.beginRead()
        let start = pinned.generation
        for i in 0..<(Int(ChangeLogTrimming.retention + ChangeLogTrimming.batch) + 20) { try notes.persist(Note(id: id, text: "\(i)")) }
        #expect(try Self.logSpan("notes#log", in: store).first <= start, "an entry the reader needs was trimmed")
        pinned.end()
        try notes.persist(Note(id: id, text: "after"))
        let (first, last) = try Self.logSpan("notes#log", in: store)
        #expect(last == store.database.generation)
        #expect(last - first >= ChangeLogTrimming.retention && last - first < ChangeLogTrimming.retention + ChangeLogTrimming.batch,
                "kept generations \(first)...\(last)")
    }

    /// A datastore removed and declared again gets a new log, starting at a later generation than
    /// the store remembered for the old one: it is trimmed to its retention all the same.
    @Test func trimMemoryAfterTheDatastoreIsRemoved() throws {
        let store = try Store.inMemory()
        let id = UUID()
        let notes = try store.datastore(NoteFormat.self)
        for i in 0..<100 { try notes.persist(Note(id: id, text: "\(i)")) }
        #expect(try store.removeDatastore(named: "notes"))
        let again = try store.datastore(NoteFormat.self)
        let recreated = store.database.generation
        for i in 0..<(Int(ChangeLogTrimming.retention + ChangeLogTrimming.batch) * 2) { try again.persist(Note(id: id, text: "\(i)")) }
        let (first, last) = try Self.logSpan("notes#log", in: store)
        #expect(first > recreated && last == store.database.generation)
        #expect(last - first >= ChangeLogTrimming.retention && last - first < ChangeLogTrimming.retention + ChangeLogTrimming.batch,
                "kept generations \(first)...\(last)")
        #expect(try again.count == 1)
    }

    /// A datastore renamed onto a name whose log the store remembered takes an older log over:
    /// the memory of that name is forgotten, so the older log's due entries are trimmed at the
    /// next append, not up to `retention + batch` generations later.
    @Test func trimMemoryIsForgottenWhenARenameTakesOverTheName() throws {
        struct OldNotes: DatastoreFormat {
            static let name = "old-notes"
            typealias Instance = Note
            typealias Identifier = UUID
        }
        struct RenamedNotes: DatastoreFormat {
            static let name = "notes"
            static let formerNames = ["old-notes"]
            typealias Instance = Note
            typealias Identifier = UUID
        }
        let store = try Store.inMemory()
        try store.datastore(OldNotes.self).persist(Note(id: UUID(), text: "old"))
        let (oldEntry, _) = try Self.logSpan("old-notes#log", in: store)
        // More than `retention + batch` generations later, a `notes` log whose oldest entry the
        // store remembers (its second append reads the committed log).
        try store.database.write { _ = try $0.createTree("filler") }
        for i in 0..<Int(ChangeLogTrimming.retention + ChangeLogTrimming.batch) + 10 {
            try store.database.write { _ = try $0.put(Array("\(i)".utf8), [UInt8(1)], in: $0.tree("filler")) }
        }
        let notes = try store.datastore(NoteFormat.self)
        try notes.persist(Note(id: UUID(), text: "1"))
        try notes.persist(Note(id: UUID(), text: "2"))
        #expect(try store.removeDatastore(named: "notes"))
        let renamed = try store.datastore(RenamedNotes.self)
        #expect(try Self.logSpan("notes#log", in: store).first == oldEntry)
        try renamed.persist(Note(id: UUID(), text: "3"))
        let (first, _) = try Self.logSpan("notes#log", in: store)
        #expect(first > oldEntry, "the taken-over log's entry of generation \(oldEntry) is overdue and still there")
    }
}
