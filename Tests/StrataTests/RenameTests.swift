import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

// One datastore as three builds of a program saw it, all at version 1.

/// The first build: the field was called "writer" and there was no rating.
struct EntryV1: Codable, Sendable, Identifiable { var id: Int; var title: String; var writer: String }
/// The next build: "writer" became "author", and "rating" was added.
struct Entry: Codable, Sendable, Identifiable, Equatable { var id: Int; var title: String; var author: String; var rating: Int }
/// A build that stored both keys (to make a collision).
struct EntryBoth: Codable, Sendable, Identifiable { var id: Int; var title: String; var writer: String; var author: String }

struct EntryFormatV1: DatastoreFormat {
    static let name = "entries"
    typealias Instance = EntryV1
    typealias Identifier = Int
    let title = Index(\.title)
}

struct EntryFormat: DatastoreFormat {
    static let name = "entries"
    typealias Instance = Entry
    typealias Identifier = Int
    static let fieldEvolution: FieldEvolution? = FieldEvolution(renamed: ["writer": "author"], defaults: ["rating": 3])
    let title = Index(\.title)
}

struct EntryBothFormat: DatastoreFormat {
    static let name = "entries"
    typealias Instance = EntryBoth
    typealias Identifier = Int
    let title = Index(\.title)
}

struct EntryFormatV1JSON: DatastoreFormat {
    static let name = "entries"
    static var coding: InstanceCoding { .json }
    typealias Instance = EntryV1
    typealias Identifier = Int
}

struct EntryFormatJSON: DatastoreFormat {
    static let name = "entries"
    static var coding: InstanceCoding { .json }
    typealias Instance = Entry
    typealias Identifier = Int
    static let fieldEvolution: FieldEvolution? = FieldEvolution(renamed: ["writer": "author"], defaults: ["rating": 3])
}

struct ConflictingFormat: DatastoreFormat {
    static let name = "entries"
    typealias Instance = Entry
    typealias Identifier = Int
    static let fieldEvolution: FieldEvolution? = FieldEvolution(renamed: ["writer": "author", "pen": "author"])
}

/// `entries` renamed to `articles`.
struct ArticleFormat: DatastoreFormat {
    static let name = "articles"
    static let formerNames = ["entries"]
    typealias Instance = EntryV1
    typealias Identifier = Int
    let title = Index(\.title)
}

@Suite struct RenameTests {
    @Test func renamedFieldAndDefaultBinary() throws {
        let store = try Store.inMemory()
        try store.datastore(EntryFormatV1.self).persist(EntryV1(id: 1, title: "Dune", writer: "Herbert"))
        let entries = try store.datastore(EntryFormat.self)
        #expect(try entries.load(1) == Entry(id: 1, title: "Dune", author: "Herbert", rating: 3))
        // Written back with the new keys; a stored value wins over the default.
        try entries.persist(Entry(id: 2, title: "Emma", author: "Austen", rating: 5))
        #expect(try entries.load(2)?.rating == 5)
        // The test's two builds name their instance types differently, which index signatures
        // include: rebuild (a real build keeps its type name and skips this).
        try entries.warm()
        #expect(try entries.loadAll("Dune", from: \.title).map(\.author) == ["Herbert"])
    }

    @Test func renamedFieldAndDefaultJSON() throws {
        let store = try Store.inMemory()
        try store.datastore(EntryFormatV1JSON.self).persist(EntryV1(id: 1, title: "Dune", writer: "Herbert"))
        let entries = try store.datastore(EntryFormatJSON.self)
        #expect(try entries.load(1) == Entry(id: 1, title: "Dune", author: "Herbert", rating: 3))
        try entries.persist(Entry(id: 2, title: "Emma", author: "Austen", rating: 5))
        #expect(try entries.loadAll().map(\.rating) == [3, 5])
    }

    @Test func renameOntoAnExistingKeyIsACollision() throws {
        let store = try Store.inMemory()
        try store.datastore(EntryBothFormat.self).persist(EntryBoth(id: 1, title: "Dune", writer: "Herbert", author: "Frank"))
        let entries = try store.datastore(EntryFormat.self)
        #expect(throws: RenameError.fieldCollision(datastore: "entries", oldKey: "writer", newKey: "author")) { try entries.load(1) }
    }

    @Test func conflictingDeclarationIsRefusedAtOpen() throws {
        let store = try Store.inMemory()
        #expect(throws: RenameError.conflictingFieldRenames(datastore: "entries", reason: "'pen' and 'writer' are both renamed to 'author'")) {
            _ = try store.datastore(ConflictingFormat.self)
        }
    }

    @Test func datastoreRenamedWithoutCopying() throws {
        let dir = TemporaryDirectory()
        let rootBefore: UInt64
        do {
            let store = try Store(at: dir.path)
            let old = try store.datastore(EntryFormatV1.self)
            try store.write { tx in for id in 0..<500 { try tx[old].persist(EntryV1(id: id, title: "t\(id)", writer: "w")) } }
            rootBefore = try store.database.read { try $0.record(of: $0.tree("entries")).root }
        }
        // A reader opening with the new code before any writer did reads under the former name.
        do {
            let reader = try Store(at: dir.path, mode: .readOnly)
            #expect(try reader.datastore(ArticleFormat.self).load(7)?.title == "t7")
        }
        let store = try Store(at: dir.path)
        let articles = try store.datastore(ArticleFormat.self)
        #expect(try articles.count == 500)
        #expect(try articles.loadAll("t42", from: \.title).map(\.id) == [42])
        #expect(articles.indexesNeedingBuild.isEmpty)
        let names = try store.database.read { try $0.treeNames() }
        #expect(names.allSatisfy { $0.hasPrefix("articles") })
        #expect(try store.database.read { try $0.record(of: $0.tree("articles")).root } == rootBefore)
        #expect(try store.datastore(EntryFormatV1.self).count == 0)
    }

    @Test func datastoreRenameOntoANameWithDataIsRefused() throws {
        let store = try Store.inMemory()
        try store.datastore(EntryFormatV1.self).persist(EntryV1(id: 1, title: "a", writer: "w"))
        _ = try store.database.write { tx in try tx.put("x", "y", in: try tx.openOrCreateTree("articles")) }
        #expect(throws: RenameError.datastoreNameTaken(datastore: "articles", formerName: "entries")) {
            _ = try store.datastore(ArticleFormat.self)
        }
        #expect(try store.datastore(EntryFormatV1.self).count == 1)
    }

    @Test func renamingATreeKeepsItsPagesAndRefusesATakenName() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let t = try tx.createTree("a")
            for i in 0..<1000 { try tx.put("k\(i)", "v\(i)", in: t) }
            try tx.createTree("b")
        }
        let pages = try db.check().treePages
        #expect(throws: StrataError.treeExists(name: "b")) { try db.write { tx in try tx.renameTree(try tx.tree("a"), to: "b") } }
        let (value, oldName) = try db.write { tx in
            let c = try tx.renameTree(try tx.tree("a"), to: "c")
            return (try tx.get("k5", in: c)?.bytes, try tx.treeIfPresent("a"))
        }
        #expect(value == Array("v5".utf8))
        #expect(oldName == nil)
        #expect(try db.read { try $0.treeNames() } == ["b", "c"])
        #expect(try db.read { try $0.count($0.tree("c")) } == 1000)
        #expect(try db.check().isClean)
        #expect(try db.check().treePages <= pages + 2)
    }
}
