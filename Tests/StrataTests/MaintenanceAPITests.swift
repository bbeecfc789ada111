import Foundation
import Glibc
import Testing
import Strata
import StrataCore
import StrataTestFixtures

/// The library APIs behind `strata copy`, `dump`, `load` and `check`.
@Suite struct MaintenanceAPITests {
    private func filledStore(_ dir: TemporaryDirectory) throws -> (Store<ReadWrite>, Datastore<BookFormat, ReadWrite>) {
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        try store.write { tx in
            for book in sampleBooks() { try tx[books].persist(book) }
            for i in 0..<2000 { try tx[books].persist(Book(title: "t\(i)", authors: ["a\(i % 7)"], isbn: "n\(i)", shelf: i % 5)) }
        }
        // Free some pages so a compacting copy has something to leave out.
        try store.write { tx in for id in try tx[books].identifiers(limit: 1500) { try tx[books].delete(id) } }
        return (store, books)
    }

    @Test func pageAndCompactingCopies() throws {
        let dir = TemporaryDirectory()
        let (store, books) = try filledStore(dir)
        let expected = try books.loadAll()
        let plain = dir.parent + "/plain.strata"
        let report = try store.database.copy(to: plain)
        #expect(report.generation == store.database.generation)
        #expect(report.copyGeneration == report.generation)
        let compact = dir.parent + "/compact.strata"
        let compactReport = try store.database.copy(to: compact, compact: true)
        #expect(compactReport.pageCount < report.pageCount)
        for path in [plain, compact] {
            let copy = try Store(at: path, mode: .readOnly)
            #expect(try copy.database.check().isClean)
            #expect(try copy.check().isClean)
            #expect(try copy.datastore(BookFormat.self).loadAll() == expected)
        }
        #expect(try Database(path: plain, mode: .readOnly).generation == report.generation)
        // Never overwrites.
        #expect(throws: StrataError.self) { try store.database.copy(to: plain) }
    }

    /// A copy never writes into or removes anything it did not create: an existing directory
    /// (empty, or another store) is refused and left as it was, for both kinds of copy. A
    /// destination written with a trailing slash names the directory itself.
    @Test func copyLeavesExistingDestinationsAloneAndAcceptsATrailingSlash() throws {
        let dir = TemporaryDirectory()
        let (store, books) = try filledStore(dir)
        let expected = try books.loadAll()
        let empty = dir.parent + "/empty.strata"
        #expect(mkdir(empty, 0o700) == 0)
        let other = dir.parent + "/other.strata"
        try Database(path: other).write { tx in try tx.put("mine", "not the copy's", in: try tx.createTree("t")) }
        for destination in [empty, other, other + "/"] {
            for compact in [false, true] {
                #expect(throws: StrataError.self) { try store.database.copy(to: destination, compact: compact) }
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        let kept = try Database(path: other, mode: .readOnly).read { tx in try tx.get("mine", in: tx.tree("t"))?.bytes }
        #expect(kept == Array("not the copy's".utf8))
        for (name, compact) in [("slash", false), ("slash-compact", true)] {
            let path = dir.parent + "/\(name).strata"
            try store.database.copy(to: path + "//", compact: compact)
            #expect(try Store(at: path, mode: .readOnly).datastore(BookFormat.self).loadAll() == expected)
        }
    }

    @Test func dumpAndLoadRoundTrip() throws {
        let dir = TemporaryDirectory()
        let (store, _) = try filledStore(dir)
        var text: [UInt8] = []
        let summary = try store.database.dump { text.append(contentsOf: $0) }
        #expect(summary.trees == 7)   // books, its log, its declaration and 4 indexes
        let dumpPath = dir.parent + "/dump.jsonl"
        _ = FileManager.default.createFile(atPath: dumpPath, contents: Data(text))
        let descriptor = open(dumpPath, O_RDONLY)
        defer { close(descriptor) }
        let reader = try DumpReader(fileDescriptor: descriptor, name: dumpPath)
        #expect(reader.pageSize == store.database.pageSize)
        #expect(reader.generation == store.database.generation)
        let target = try Database(path: dir.parent + "/loaded.strata")
        let loaded = try target.load(reader, batch: 1000)
        #expect(loaded.trees == summary.trees && loaded.entries == summary.entries)
        #expect(loaded.commits > 1)
        var again: [UInt8] = []
        try target.dump { again.append(contentsOf: $0) }
        // Identical but for the header (generation).
        #expect(again.split(separator: 0x0A).dropFirst() == text.split(separator: 0x0A).dropFirst())
        #expect(throws: DumpError.noSuchTree(path: store.path, name: "nope", available: try store.database.read { try $0.treeNames() })) {
            try store.database.dump(trees: ["nope"]) { _ in }
        }
    }

    @Test func loadRefusesBadInput() throws {
        let dir = TemporaryDirectory()
        func reader(_ text: String) throws -> DumpReader {
            let path = dir.parent + "/\(UUID().uuidString).jsonl"
            _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
            let descriptor = open(path, O_RDONLY)
            return try DumpReader(fileDescriptor: descriptor, name: "input")
        }
        #expect(throws: DumpError.notADump(source: "input", reason: "its first line has no \"strata_dump\" field")) {
            _ = try reader("{\"tree\":\"a\"}\n")
        }
        #expect(throws: DumpError.unsupportedVersion(source: "input", found: 9, supported: 1)) { _ = try reader("{\"strata_dump\":9}\n") }
        let db = try Database(path: dir.path)
        #expect(throws: DumpError.invalidLine(source: "input", line: 3, reason: "\"k\" is not base64")) {
            try db.load(try reader("{\"strata_dump\":1}\n{\"tree\":\"a\"}\n{\"k\":\"!!\",\"v\":\"\"}\n"))
        }
        try db.write { tx in try tx.put("k", "v", in: try tx.openOrCreateTree("t")) }
        #expect(throws: DumpError.storeNotEmpty(path: dir.path, trees: 1)) { try db.load(try reader("{\"strata_dump\":1}\n")) }
    }

    /// Damage made through the engine, behind the typed layer's back, is found by both checks.
    @Test func consistencyChecksFindDamagedIndexes() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let all = sampleBooks()
        for book in all { try books.persist(book) }
        #expect(try books.check().isClean)
        #expect(try books.check().instances == 6)
        #expect(try store.check().isClean)
        let victim = all[1]
        try store.database.write { tx in
            // A record without its title entry, an entry without a record, a stale direct copy.
            let title = try tx.tree("books#index.title")
            try tx.delete(victim.title.orderedKeyBytes + victim.id.orderedKeyBytes, in: title)
            try tx.put("Ghost".orderedKeyBytes + UUID().orderedKeyBytes, [UInt8](), in: title)
            let isbn = try tx.tree("books#index.isbn")
            let other = all[2]
            try tx.put(other.isbn.orderedKeyBytes + other.id.orderedKeyBytes, [1, 2, 3], in: isbn)
        }
        let typed = try books.check()
        #expect(typed.problems.count == 3, "\(typed.problems)")
        #expect(typed.problems.contains { $0.contains("index 'title' lacks entry") })
        #expect(typed.problems.contains { $0.contains("index 'title' has entry") && $0.contains("no instance calls for") })
        #expect(typed.problems.contains { $0.contains("direct index 'isbn'") })
        let formatFree = try store.check()
        #expect(!formatFree.isClean)
        #expect(formatFree.problems.contains { $0.contains("names no instance") }, "\(formatFree.problems)")
        #expect(formatFree.problems.contains { $0.contains("no entry for 1 of 6 instances") }, "\(formatFree.problems)")
        #expect(formatFree.problems.contains { $0.contains("direct index 'isbn'") }, "\(formatFree.problems)")
    }

    @Test func inspectorSummaries() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        for book in sampleBooks() { try books.persist(book) }
        let summary = try #require(try store.datastoreSummaries().first)
        #expect(summary.name == "books" && summary.instances == 6 && summary.version == "2" && summary.coding == .binary)
        #expect(summary.indexes.map(\.name) == ["authors", "isbn", "shelfTitle", "title"])
        #expect(summary.indexes.first { $0.name == "isbn" }?.isDirect == true)
        #expect(summary.indexes.first { $0.name == "authors" }?.kind == .manyToMany)
        #expect(summary.holdsInstances("books") && summary.holdsInstances("books#index.isbn") && !summary.holdsInstances("books#log"))
    }
}
