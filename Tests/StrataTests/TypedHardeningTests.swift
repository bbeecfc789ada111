import Foundation
import Testing
import Strata
@_spi(Testing) import StrataCore
import StrataTestFixtures

// Formats for the renaming test: the same datastore declared over an instance type that was
// renamed (the old name kept for the old shape, as `BookV1` is).
struct RenamedItemV1: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var name: String
    var tags: [String]
    var shelf: Int
}

struct RenamedItem: Codable, Sendable, Identifiable, Equatable {
    var id: Int
    var name: String
    var tags: [String]
    var shelf: Int
}

enum ItemVersion: Int, DatastoreVersion { case v1 = 1 }

/// The "items" datastore, declared three times below over the instance types above.
protocol ItemsFormat: DatastoreFormat where Version == ItemVersion, Identifier == Int, Instance: Decodable {}

extension ItemsFormat {
    static var name: String { "items" }
    static var currentVersion: ItemVersion { .v1 }
    static func migrate(_ stored: StoredInstance, from version: ItemVersion) throws -> Instance { try stored.decode(Instance.self) }
}

struct ItemFormatBeforeRename: ItemsFormat {
    typealias Instance = RenamedItemV1
    let name = Index(\.name)
    let tags = ManyToManyIndex(\.tags)
    let shelfName = Index(\.shelf, \.name)
}

struct ItemFormatAfterRename: ItemsFormat {
    typealias Instance = RenamedItem
    let name = Index(\.name)
    let tags = ManyToManyIndex(\.tags)
    let shelfName = Index(\.shelf, \.name)
}

/// The renamed format in its next version: one more index.
struct ItemFormatWithShelfIndex: ItemsFormat {
    typealias Instance = RenamedItem
    let name = Index(\.name)
    let tags = ManyToManyIndex(\.tags)
    let shelfName = Index(\.shelf, \.name)
    let shelf = Index(\.shelf)
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

@Suite struct TypedHardeningTests {
    // MARK: 3. Index staleness

    @Test func renamingTheInstanceTypeKeepsIndexesBuilt() throws {
        let dir = TemporaryDirectory()
        do {
            let items = try Store(at: dir.path).datastore(ItemFormatBeforeRename.self)
            for i in 0..<20 { try items.persist(RenamedItemV1(id: i, name: "item \(i)", tags: ["t\(i % 3)"], shelf: i % 4)) }
        }
        let store = try Store(at: dir.path)
        let items = try store.datastore(ItemFormatAfterRename.self)
        #expect(items.indexesNeedingBuild.isEmpty)
        #expect(try items.loadAll("item 7", from: \.name).map(\.id) == [7])
        #expect(try items.loadAll("t1", from: \.tags).count == 7)
        #expect(try items.load(CompositeKey(3, "item 3")...CompositeKey(3, "item 3"), from: \.shelfName).map(\.id) == [3])
    }

    /// Stores written before the fix recorded `\TypeName.property`: understood, not stale.
    @Test func descriptorsInTheOldFormAreUnderstood() throws {
        let dir = TemporaryDirectory()
        do {
            let items = try Store(at: dir.path).datastore(ItemFormatBeforeRename.self)
            try items.persist(RenamedItemV1(id: 1, name: "one", tags: ["a"], shelf: 1))
        }
        do {
            let database = try Database(path: dir.path)
            try database.write { tx in
                let info = try tx.tree("items#info")
                let legacy = #"{"indexes":[{"isDirect":false,"name":"name","signature":"oneToMany(String) \\RenamedItemV1.name"},"#
                    + #"{"isDirect":false,"name":"shelfName","signature":"oneToMany((Int, String)) \\RenamedItemV1.shelf, \\RenamedItemV1.name"},"#
                    + #"{"isDirect":false,"name":"tags","signature":"manyToMany(String) \\RenamedItemV1.tags"}],"version":"1"}"#
                try tx.put("descriptor", Array(legacy.utf8), in: info)
            }
        }
        let items = try Store(at: dir.path).datastore(ItemFormatAfterRename.self)
        #expect(items.indexesNeedingBuild.isEmpty)
        #expect(try items.loadAll("one", from: \.name).map(\.id) == [1])
    }

    /// A new version adds an index: opening with `warming:` builds it before returning.
    @Test func addedIndexIsBuiltWhenOpenedWarming() throws {
        let dir = TemporaryDirectory()
        do {
            let items = try Store(at: dir.path).datastore(ItemFormatAfterRename.self)
            for i in 0..<20 { try items.persist(RenamedItem(id: i, name: "item \(i)", tags: [], shelf: i % 4)) }
        }
        do {
            let plain = try Store(at: dir.path).datastore(ItemFormatWithShelfIndex.self)
            #expect(plain.indexesNeedingBuild == ["shelf"])
            #expect(throws: DatastoreError.indexNotBuilt(datastore: "items", index: "shelf")) { _ = try plain.loadAll(2, from: \.shelf) }
        }
        var reports: [DatastoreProgress] = []
        let items = try Store(at: dir.path).datastore(ItemFormatWithShelfIndex.self) { reports.append($0) }
        #expect(items.indexesNeedingBuild.isEmpty)
        #expect(try items.loadAll(2, from: \.shelf).map(\.id) == [2, 6, 10, 14, 18])
        #expect(reports.first == .evaluating && reports.last == .complete(total: 20))
        items.store.close()
        var again: [DatastoreProgress] = []
        _ = try Store(at: dir.path).datastore(ItemFormatWithShelfIndex.self) { again.append($0) }
        #expect(again.isEmpty, "nothing to build: no progress")
    }

    // MARK: 2. Damaged instances

    /// Fills a store with books (direct, reference, many-valued and composite indexes, a change log).
    func makeBookStore(at path: String, count: Int) throws {
        let store = try Store(at: path)
        let books = try store.datastore(BookFormat.self)
        for i in 0..<count {
            let book = Book(id: UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", i))!, title: "Title \(i % 50)",
                            authors: ["Author \(i % 7)", "Author \(i % 11)"], isbn: "isbn-\(i)", shelf: i % 9)
            try books.persist(book)
        }
    }

    /// Every kind of typed read; returns the errors that are neither `StrataError` nor `DatastoreError`.
    func untypedErrors(reading path: String, count: Int) -> [String] {
        var untyped: [String] = []
        func attempt(_ what: String, _ body: () throws -> Void) {
            do { try body() } catch is StrataError {} catch is DatastoreError {} catch { untyped.append("\(what): \(type(of: error)) \(error)") }
        }
        attempt("open") {
            let store = try Store(at: path, mode: .readOnly)
            let books = try store.datastore(BookFormat.self)
            attempt("count") { _ = try books.count }
            attempt("loadAll") { _ = try books.loadAll() }
            attempt("loadAll descending") { _ = try books.loadAll(order: .descending) }
            for i in stride(from: 0, to: count, by: 7) {
                let id = UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", i))!
                attempt("load id") { _ = try books.load(id) }
                attempt("load isbn") { _ = try books.load("isbn-\(i)", from: \.isbn) }
            }
            attempt("title range") { _ = try books.load("Title 1"..<"Title 3", from: \.title) }
            attempt("titles") { _ = try books.load(..., from: \.title) }
            attempt("authors") { _ = try books.loadAll("Author 3", from: \.authors) }
            attempt("count authors") { _ = try books.count("A"..."Z", from: \.authors) }
            attempt("composite") { _ = try books.load(CompositeKey(1, "A")..<CompositeKey(1, "Z"), from: \.shelfTitle) }
            attempt("isbn range") { _ = try books.load(..., from: \.isbn) }
            attempt("id range") { _ = try books.load(UUID(uuidString: "00000000-0000-0000-0000-000000000010")!..., limit: 20) }
            attempt("transaction") {
                try store.read { tx in _ = try tx[books].loadAll(limit: 30) }
            }
        }
        return untyped
    }

    /// Bit flips in leaf pages (records, indexes, the change log) with checksums off: typed reads
    /// of every kind throw only typed errors (or succeed), never crash.
    @Test func bitFlipsInTypedStoresGiveOnlyTypedErrors() throws {
        let seed = testSeed("typedFuzz")
        var random = SeededGenerator(seed: seed)
        let count = 300
        let pristine = TemporaryDirectory()
        try makeBookStore(at: pristine.path, count: count)
        let original = try Data(contentsOf: URL(fileURLWithPath: pristine.path + "/data"))
        let page = try Database(path: pristine.path, mode: .readOnly).pageSize
        let leaves = stride(from: 2 * page, to: original.count, by: page).filter { original[$0 + 24] == 3 }
        var failures: [String] = []
        var trialsWithErrors = 0
        let trials = 150
        for trial in 0..<trials {
            let dir = TemporaryDirectory()
            try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
            var bytes = original
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let leaf = leaves[Int.random(in: 0..<leaves.count, using: &random)]
                let offset = leaf + Int.random(in: 32..<page, using: &random)
                bytes[offset] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            }
            try bytes.write(to: URL(fileURLWithPath: dir.path + "/data"))
            let untyped = untypedErrors(reading: dir.path, count: count)
            if !untyped.isEmpty { trialsWithErrors += 1 }
            failures += untyped.prefix(3).map { "trial \(trial): \($0)" }
        }
        print("[typedFuzz] seed \(seed) (rerun with STRATA_SEED=\(seed)): \(trials) trials over \(leaves.count) leaf pages, \(trialsWithErrors) with untyped errors")
        #expect(failures.isEmpty, "\(failures.prefix(10).joined(separator: "\n"))")
    }

    @Test func damagedInstanceNamesItsIdentifier() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let book = Book(title: "Dune", authors: ["Frank Herbert"], isbn: "isbn-1", shelf: 1)
        try books.persist(book)
        // Overwrite the stored envelope with bytes that are not an instance.
        try store.database.write { tx in try tx.put(book.id.orderedKeyBytes, [0, 1, 0xFF, 0xFF, 0xFF], in: try tx.tree("books")) }
        #expect {
            _ = try books.load(book.id)
        } throws: { error in
            guard case DatastoreError.corruptInstance(let datastore, let id, _) = error else { return false }
            return datastore == "books" && id == "\(book.id)"
        }
        #expect(throws: DatastoreError.self) { _ = try books.loadAll() }
        // The direct index holds its own copy of the instance, which is intact.
        #expect(try books.load("isbn-1", from: \.isbn) == book)
        #expect(throws: DatastoreError.self) { _ = try books.loadAll("Dune", from: \.title) }
    }

    @Test(.timeLimit(.minutes(1))) func damagedLogEntryIsATypedError() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        try await books.persist(Book(title: "Dune", authors: [], isbn: "isbn-1", shelf: 1))
        let changes = books.changes()
        try store.database.write { tx in
            var key = withUnsafeBytes(of: tx.transactionID.bigEndian) { Array($0) }
            key += [0, 0, 0, 0]
            try tx.put(key, [1, 0xFF], in: try tx.tree("books#log"))
        }
        var iterator = changes.makeAsyncIterator()
        await #expect {
            _ = try await iterator.next()
        } throws: { error in
            guard case DatastoreError.corruptLogEntry(let datastore, _, _) = error else { return false }
            return datastore == "books"
        }
    }

    // MARK: 4. Observation with a starting point

    func created(_ event: ObservedEvent<UUID, Book>?) -> Book? {
        if case .created(_, let book)? = event { return book }
        return nil
    }

    @Test(.timeLimit(.minutes(1))) func changesSubscribeWhenCalled() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let changes = books.changes()
        // Committed after changes() but before the iterator exists: still reported.
        let book = Book(title: "Dune", authors: [], isbn: "isbn-1", shelf: 1)
        try await books.persist(book)
        var iterator = changes.makeAsyncIterator()
        let event = try await iterator.next()
        #expect(created(event) == book)
    }

    @Test(.timeLimit(.minutes(1))) func observeStartsFromAnInitialValueWithoutAGap() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let first = Book(title: "Dune", authors: [], isbn: "isbn-1", shelf: 1)
        try await books.persist(first)
        let observation = try books.observe()
        #expect(observation.initial == [first])
        #expect(observation.generation == store.database.generation)
        let second = Book(title: "Emma", authors: [], isbn: "isbn-2", shelf: 2)
        try await books.persist(second)
        var iterator = observation.changes.makeAsyncIterator()
        #expect(created(try await iterator.next()) == second)
    }

    // MARK: 5. Rough edges

    @Test func uniqueViolationShowsTheValue() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        try books.persist(Book(title: "Dune", authors: [], isbn: "isbn-1", shelf: 1))
        #expect(throws: DatastoreError.uniqueIndexViolation(datastore: "books", index: "isbn", value: "\"isbn-1\"")) {
            try books.persist(Book(title: "Other", authors: [], isbn: "isbn-1", shelf: 2))
        }
    }

    @Test func closeReleasesTheWriterLock() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        try books.persist(Book(title: "Dune", authors: [], isbn: "isbn-1", shelf: 1))
        store.close()
        #expect(throws: StrataError.self) { _ = try books.loadAll() }
        let next = try Store(at: dir.path)
        #expect(try next.datastore(BookFormat.self).count == 1)
    }

    @Test func cancelledAsyncWriteDoesNotRunItsBody() async throws {
        let store = try Store.inMemory()
        let ran = Flag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.write { _ in ran.set() }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(!ran.isSet, "the body of a write cancelled before it started ran")
    }
}
