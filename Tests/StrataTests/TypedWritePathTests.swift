import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

/// The typed write path (`DatastoreWriter.store`): which index trees a write touches, what a
/// direct index holds after an update, and writes of one transaction that depend on each other
/// (the same record twice, a unique value moving between records, a failure midway).
@Suite struct TypedWritePathTests {
    private struct IntendedFailure: Error {}

    private func record(_ tree: String, in store: Store<ReadWrite>) throws -> TreeRecord {
        try store.database.read { tx in try tx.record(of: try tx.tree(tree)) }
    }

    private func lastModified(_ tree: String, in store: Store<ReadWrite>) throws -> UInt64 {
        try record(tree, in: store).lastModified
    }

    private func entries(_ tree: String, in store: Store<ReadWrite>) throws -> UInt64 {
        try record(tree, in: store).entries
    }

    /// An update that keeps every indexed value writes no index tree (a reference index's entry
    /// is `value ++ id`, unchanged), while the primary tree and the log change. A direct index
    /// keeps a copy of the instance: its entry is rewritten, and loads through it see the update.
    @Test func updateKeepingIndexedValuesWritesOnlyTheTreesItMust() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        var book = Book(title: "Dune", authors: ["Herbert"], isbn: "isbn-1", shelf: 1)
        try books.persist(book)
        let before = try ["books#index.title", "books#index.authors", "books#index.shelfTitle", "books#index.isbn", "books"]
            .map { try lastModified($0, in: store) }

        book.published = Date(timeIntervalSince1970: 1000) // not indexed
        let replaced = try books.persist(book)
        #expect(replaced?.published == Date(timeIntervalSince1970: 0))
        #expect(try lastModified("books#index.title", in: store) == before[0])
        #expect(try lastModified("books#index.authors", in: store) == before[1])
        #expect(try lastModified("books#index.shelfTitle", in: store) == before[2])
        #expect(try lastModified("books#index.isbn", in: store) > before[3]) // direct: rewritten
        #expect(try lastModified("books", in: store) > before[4])
        #expect(try books.load("isbn-1", from: \.isbn) == book)
        #expect(try books.check().problems.isEmpty)

        // Changing one indexed value writes that index only (and the direct one).
        let titleBefore = try lastModified("books#index.title", in: store)
        let authorsBefore = try lastModified("books#index.authors", in: store)
        book.authors = ["Herbert", "Anderson"]
        try books.persist(book)
        #expect(try lastModified("books#index.title", in: store) == titleBefore)
        #expect(try lastModified("books#index.authors", in: store) > authorsBefore)
        #expect(try books.loadAll("Anderson", from: \.authors).map(\.id) == [book.id])
        #expect(try books.load("isbn-1", from: \.isbn) == book)
        #expect(try books.check().problems.isEmpty)
    }

    /// An update that changes every indexed value at once (a many-valued index keeping one value,
    /// dropping one and gaining one) leaves each index exact: the write's index entries are
    /// collected for all indexes first, then applied tree by tree, removals before additions.
    /// The same update refused by a unique clash writes nothing, in no index.
    @Test func updateChangingEveryIndexKeepsEachExact() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        var book = Book(title: "Dune", authors: ["Herbert", "Anderson"], isbn: "isbn-1", shelf: 1)
        let other = Book(title: "Emma", authors: ["Austen"], isbn: "isbn-2", shelf: 2)
        try store.write { tx in
            try tx[books].persist(book)
            try tx[books].persist(other)
        }
        let trees = ["books#index.title", "books#index.authors", "books#index.shelfTitle", "books#index.isbn"]
        let counts = try trees.map { try entries($0, in: store) }
        #expect(counts == [2, 3, 2, 2])

        // A clash on the unique index: nothing of the update is written, in any index.
        var clashing = book
        clashing.title = "Dune Messiah"
        clashing.authors = ["Herbert", "Brian"]
        clashing.shelf = 7
        clashing.isbn = "isbn-2"
        #expect(throws: DatastoreError.self) { try books.persist(clashing) }
        #expect(try books.load(book.id) == book)
        #expect(try books.loadAll("Dune", from: \.title).map(\.id) == [book.id])
        #expect(try books.loadAll("Brian", from: \.authors).isEmpty)
        #expect(try trees.map { try entries($0, in: store) } == counts)

        book.title = "Dune Messiah"
        book.authors = ["Herbert", "Brian"]
        book.shelf = 7
        book.isbn = "isbn-3"
        #expect(try books.persist(book)?.isbn == "isbn-1")
        #expect(try trees.map { try entries($0, in: store) } == counts)
        #expect(try books.loadAll("Dune", from: \.title).isEmpty)
        #expect(try books.loadAll("Dune Messiah", from: \.title).map(\.id) == [book.id])
        #expect(try books.loadAll("Anderson", from: \.authors).isEmpty)
        #expect(try books.loadAll("Brian", from: \.authors).map(\.id) == [book.id])
        #expect(try books.loadAll("Herbert", from: \.authors).map(\.id) == [book.id])
        #expect(try books.load("isbn-1", from: \.isbn) == nil)
        #expect(try books.load("isbn-3", from: \.isbn) == book)
        #expect(try books.load("isbn-2", from: \.isbn) == other)
        #expect(try books.check().problems.isEmpty)
    }

    /// An update tells an unchanged indexed value by `==` without encoding it. Strings that are
    /// `==` but spelled differently (composed and decomposed "é") share one key, so an update
    /// from one spelling to the other leaves the reference index as it was, rewrites the direct
    /// one, and every spelling still finds the book; a real change still moves the entries.
    @Test func updateWithEqualButDifferentlySpelledValuesKeepsIndexesExact() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        var book = Book(title: "Caf\u{E9}", authors: ["A"], isbn: "isbn-caf\u{E9}", shelf: 1)
        try books.persist(book)
        let titleBefore = try lastModified("books#index.title", in: store)
        let isbnBefore = try lastModified("books#index.isbn", in: store)

        book.title = "Cafe\u{301}"
        book.isbn = "isbn-cafe\u{301}"
        #expect(try books.persist(book) != nil)
        #expect(try lastModified("books#index.title", in: store) == titleBefore)
        #expect(try lastModified("books#index.isbn", in: store) > isbnBefore) // direct: rewritten
        #expect(try entries("books#index.title", in: store) == 1)
        #expect(try entries("books#index.isbn", in: store) == 1)
        for spelling in ["Caf\u{E9}", "Cafe\u{301}"] {
            #expect(try books.loadAll(spelling, from: \.title).map(\.id) == [book.id])
        }
        #expect(try books.load("isbn-caf\u{E9}", from: \.isbn)?.title == "Cafe\u{301}")
        #expect(try books.check().problems.isEmpty)

        book.title = "Caff\u{E8}"
        try books.persist(book)
        #expect(try books.loadAll("Caf\u{E9}", from: \.title).isEmpty)
        #expect(try books.loadAll("Caff\u{E8}", from: \.title).map(\.id) == [book.id])
        #expect(try entries("books#index.title", in: store) == 1)
        #expect(try books.check().problems.isEmpty)
    }

    /// A user's key type whose `==` is looser than its encoding (it breaks the canonical-form
    /// rule: a case-insensitive tag stored as typed): an update from "Foo" to "foo" still moves
    /// the index entry, because only the library's own key types are compared by `==`.
    @Test func keyTypesWithALooserEqualityAreComparedEncoded() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let notes = try store.datastore(TaggedNoteFormat.self)
        var note = TaggedNote(id: UUID(), tag: Tag(rawValue: "Foo"))
        try notes.persist(note)
        note.tag = Tag(rawValue: "foo")
        try notes.persist(note)
        #expect(try notes.loadAll(Tag(rawValue: "foo"), from: \.tag).map(\.id) == [note.id])
        #expect(try notes.loadAll(Tag(rawValue: "Foo"), from: \.tag).isEmpty)
        #expect(try notes.check().problems.isEmpty)
    }

    /// Many writes in one transaction that depend on each other: a record written twice (the
    /// second write sees the first, and its old index entries go), a unique value released by one
    /// record and taken by another, and a duplicate unique value inside the transaction, which is
    /// refused while everything before it stays.
    @Test func writesInOneTransactionSeeEachOther() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        var first = Book(title: "A", authors: ["X"], isbn: "isbn-a", shelf: 1)
        var second = Book(title: "B", authors: ["Y"], isbn: "isbn-b", shelf: 2)
        try store.write { tx in
            #expect(try tx[books].persist(first) == nil)
            #expect(try tx[books].persist(second) == nil)
            first.title = "A2"
            #expect(try tx[books].persist(first)?.title == "A")
            // isbn-a moves from the first book to the second, within the transaction.
            first.isbn = "isbn-moved"
            try tx[books].persist(first)
            second.isbn = "isbn-a"
            try tx[books].persist(second)
            // A third book taking a value the second now holds is refused; nothing of it is written.
            let clash = Book(title: "C", authors: [], isbn: "isbn-a", shelf: 3)
            #expect(throws: DatastoreError.self) { try tx[books].persist(clash) }
            #expect(try tx[books].load(clash.id) == nil)
        }
        #expect(try books.load(first.id) == first)
        #expect(try books.load(second.id) == second)
        #expect(try books.loadAll("A", from: \.title).isEmpty)
        #expect(try books.loadAll("A2", from: \.title).map(\.id) == [first.id])
        #expect(try books.load("isbn-a", from: \.isbn) == second)
        #expect(try books.load("isbn-moved", from: \.isbn) == first)
        #expect(try books.load("isbn-b", from: \.isbn) == nil)
        #expect(try books.loadAll().count == 2)
        #expect(try books.check().problems.isEmpty)
    }

    /// A transaction that fails after many writes leaves nothing of them, and the next
    /// transaction writes through the same datastore handle normally (the reused write buffers
    /// and leaf hints of the failed one are gone with it).
    @Test func failedTransactionLeavesNothing() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        let kept = (0..<50).map { Book(title: "Kept \($0)", authors: ["K"], isbn: "kept-\($0)", shelf: $0 % 3) }
        try store.write { tx in for book in kept { try tx[books].persist(book) } }

        let lost = (0..<300).map { Book(title: "Lost \($0)", authors: ["L\($0 % 7)"], isbn: "lost-\($0)", shelf: $0 % 5) }
        #expect(throws: IntendedFailure.self) {
            try store.write { tx in
                for (index, book) in lost.enumerated() {
                    try tx[books].persist(book)
                    if index % 3 == 0 { try tx[books].persist(kept[index % kept.count].renamed("Changed \(index)")) }
                    if index == 250 { throw IntendedFailure() }
                }
            }
        }
        #expect(try books.loadAll().count == kept.count)
        for book in kept { #expect(try books.load(book.id) == book) }
        #expect(try books.loadAll("L1", from: \.authors).isEmpty)
        #expect(try books.load("lost-3", from: \.isbn) == nil)
        #expect(try books.check().problems.isEmpty)

        try store.write { tx in for book in lost { try tx[books].persist(book) } }
        #expect(try books.loadAll().count == kept.count + lost.count)
        #expect(try books.load("lost-299", from: \.isbn) == lost[299])
        #expect(try books.check().problems.isEmpty)
    }

    /// New instances write their single index values straight into the write's key buffer
    /// (`WriteScratch.appendValue`). Inserts refused by a unique clash in the middle of a batch
    /// (in savepoints, so the batch goes on) write no entry of theirs, the value in the error is
    /// the clashing one, and the entries of the inserts around them are exact.
    @Test func insertsRefusedMidBatchWriteNothing() throws {
        let (accepted, refused) = try insertBatch(count: 200, clashing: { $0 % 10 == 9 }, inSavepoints: true)
        #expect(accepted == 180 && refused == 20)
    }

    /// The same batch without savepoints: a savepoint forgets the leaf hints, so only here does
    /// the unique check answer from the leaf the previous insert went into. Values ascend, each
    /// clash repeats the previous insert's value (in that very leaf), and a refused insert writes
    /// nothing, so its error is caught inline and the transaction commits the rest.
    @Test func insertsRefusedInOneTransactionWithoutSavepoints() throws {
        let (accepted, refused) = try insertBatch(count: 400, clashing: { $0 % 7 == 6 }, inSavepoints: false)
        #expect(accepted == 400 - 57 && refused == 57)
    }

    /// Inserts `count` books in one transaction, those at `clashing` indexes with the previous
    /// book's isbn (values otherwise ascend), each in a savepoint if `inSavepoints`; checks each
    /// refusal, then that the committed store holds exactly the accepted books and entries.
    private func insertBatch(count: Int, clashing: (Int) -> Bool, inSavepoints: Bool) throws -> (accepted: Int, refused: Int) {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        var accepted: [Book] = []
        var refused: [Book] = []
        try store.write { tx in
            for index in 0..<count {
                let clashes = clashing(index)
                let number = String(clashes ? index - 1 : index)
                let book = Book(title: "T \(index)", authors: ["A\(index % 4)"],
                                isbn: "isbn-" + String(repeating: "0", count: 4 - number.count) + number, shelf: index % 6)
                do {
                    if inSavepoints { try tx.savepoint { try tx[books].insert(book) } } else { try tx[books].insert(book) }
                    accepted.append(book)
                } catch DatastoreError.uniqueIndexViolation(let datastore, let index, let value) {
                    #expect(clashes && datastore == "books" && index == "isbn" && value == "\"\(book.isbn)\"")
                    refused.append(book)
                }
            }
        }
        #expect(try books.check().problems.isEmpty)
        let acceptedIDs = Set(accepted.map(\.id))
        #expect(Set(try books.loadAll().map(\.id)) == acceptedIDs && acceptedIDs.count == accepted.count)
        for book in accepted {
            #expect(try books.load(book.id) == book)
            #expect(try books.load(book.isbn, from: \.isbn) == book)
            #expect(try books.loadAll(book.title, from: \.title).map(\.id) == [book.id])
        }
        for book in refused {
            #expect(try books.load(book.id) == nil)
            #expect(try books.loadAll(book.title, from: \.title).isEmpty)
            #expect(try books.load(book.isbn, from: \.isbn)?.id != book.id)
        }
        return (accepted.count, refused.count)
    }
}

private extension Book {
    func renamed(_ title: String) -> Book {
        var copy = self
        copy.title = title
        return copy
    }
}

/// A tag compared case-insensitively but encoded as typed (what the canonical-form rule forbids,
/// and what a user may still write).
private struct Tag: RawRepresentable, OrderedKey, Comparable, Codable {
    var rawValue: String
    init(rawValue: String) { self.rawValue = rawValue }
    static func == (first: Tag, second: Tag) -> Bool { first.rawValue.lowercased() == second.rawValue.lowercased() }
    static func < (first: Tag, second: Tag) -> Bool { first.rawValue.lowercased() < second.rawValue.lowercased() }
    func hash(into hasher: inout Hasher) { hasher.combine(rawValue.lowercased()) }
}

private struct TaggedNote: Codable, Identifiable, Sendable {
    var id: UUID
    var tag: Tag
}

private struct TaggedNoteFormat: DatastoreFormat {
    static let name = "tagged-notes"
    typealias Instance = TaggedNote
    typealias Identifier = UUID
    let tag = Index(\.tag)
}
