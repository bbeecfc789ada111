import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

/// Index names are the format's property names, and two of those can differ only in Unicode
/// normalization: `Å` below is U+212B (ANGSTROM SIGN), `Å` is "A" and U+030A (a combining
/// ring): equal by `==`, two trees in the catalog. The typed layer's rule: one format may not
/// declare both (a typed error at open, never a trap), while a stored index whose name is only
/// equivalent to a declared one is another index (its own tree, dropped and rebuilt). Datastore
/// names follow the engine: equivalent names are two datastores, and a former name equivalent to
/// the new one is taken over like any other (see `EquivalentDatastoreNameTests`).
@Suite struct EquivalentIndexNameTests {
    struct TwinIndexesFormat: DatastoreFormat {
        static let name = "twins"
        typealias Instance = Tick
        typealias Identifier = Int
        let Å = Index(\.value)
        let Å = Index(\.id)
    }

    struct SignIndexFormat: DatastoreFormat {
        static let name = "renormalized"
        typealias Instance = Tick
        typealias Identifier = Int
        let Å = Index(\.value)
    }

    struct ComposedIndexFormat: DatastoreFormat {
        static let name = "renormalized"
        typealias Instance = Tick
        typealias Identifier = Int
        let Å = Index(\.value)
    }

    struct ComposedNameFormat: DatastoreFormat {
        static let name = "Å"
        typealias Instance = Tick
        typealias Identifier = Int
        let value = Index(\.value)
    }

    struct SignNameFormat: DatastoreFormat {
        static let name = "\u{212B}"
        static let formerNames = ["A\u{30A}"]
        typealias Instance = Tick
        typealias Identifier = Int
        let value = Index(\.value)
    }

    private static func bytes(_ names: some Sequence<String>) -> [[UInt8]] { names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) } }

    @Test func aFormatDeclaringTwoEquivalentIndexNamesIsRefusedWithATypedError() throws {
        let labels = Mirror(reflecting: TwinIndexesFormat()).children.compactMap(\.label)
        #expect(labels.count == 2 && labels[0] == labels[1] && Array(labels[0].utf8) != Array(labels[1].utf8))
        let store = try Store.inMemory()
        do {
            _ = try store.datastore(TwinIndexesFormat.self)
            Issue.record("a format with two equivalent index names opened")
        } catch DatastoreError.equivalentIndexNames(let datastore, let names) {
            #expect(datastore == "twins")
            #expect(Self.bytes(names) == Self.bytes(labels))
        }
        // Nothing was declared, and the store goes on working.
        #expect(try store.datastoreNames().isEmpty)
        let ticks = try store.datastore(TickFormat.self)
        try ticks.persist(Tick(id: 1, value: 1))
        #expect(try ticks.loadAll().count == 1)
    }

    @Test func anIndexRenamedOnlyInNormalizationIsRebuiltUnderItsOwnTree() throws {
        let store = try Store.inMemory()
        let before = try store.datastore(SignIndexFormat.self)
        for id in 1...3 { try before.persist(Tick(id: id, value: id * 10)) }
        #expect(try before.loadAll(20, from: \.Å).map(\.id) == [2])

        let after = try store.datastore(ComposedIndexFormat.self)
        #expect(Self.bytes(after.indexesNeedingBuild) == Self.bytes(["Å"]), "the declared index has no entries yet")
        try after.warm()
        #expect(after.indexesNeedingBuild.isEmpty)
        #expect(try after.loadAll(20, from: \.Å).map(\.id) == [2])
        #expect(try after.load(10...30, from: \.Å).map(\.id) == [1, 2, 3])
        let trees = try store.database.read { try $0.treeNames() }
        #expect(trees.contains { Array($0.utf8) == Array("renormalized#index.Å".utf8) })
        #expect(!trees.contains { Array($0.utf8) == Array("renormalized#index.Å".utf8) }, "the old index's tree is dropped")
        #expect(try after.check().problems.isEmpty)

        // And back: the stored declaration now names the composed form.
        let again = try store.datastore(SignIndexFormat.self, warming: { _ in })
        #expect(again.indexesNeedingBuild.isEmpty)
        #expect(try again.loadAll(30, from: \.Å).map(\.id) == [3])
        #expect(try again.check().problems.isEmpty)
    }

    @Test func anEmptyDatastoreRedeclaredWithAnEquivalentIndexNameDropsTheOldTree() throws {
        let store = try Store.inMemory()
        _ = try store.datastore(SignIndexFormat.self)
        let after = try store.datastore(ComposedIndexFormat.self)
        #expect(after.indexesNeedingBuild.isEmpty)
        try after.persist(Tick(id: 7, value: 70))
        #expect(try after.loadAll(70, from: \.Å).map(\.id) == [7])
        let trees = try store.database.read { try $0.treeNames() }
        #expect(!trees.contains { Array($0.utf8) == Array("renormalized#index.Å".utf8) })
        #expect(try after.check().problems.isEmpty)
    }

    @Test func aFormerNameEquivalentToTheNewNameIsTakenOver() throws {
        #expect(SignNameFormat.name == ComposedNameFormat.name && SignNameFormat.formerNames == [ComposedNameFormat.name])
        let dir = TemporaryDirectory()
        do {
            let store = try Store(at: dir.path)
            defer { store.close() }
            let old = try store.datastore(ComposedNameFormat.self)
            for id in 1...3 { try old.persist(Tick(id: id, value: id)) }
        }
        // A read-only store reads the data where it is, under the former name.
        do {
            let reader = try Store(at: dir.path, mode: .readOnly)
            defer { reader.close() }
            let renamed = try reader.datastore(SignNameFormat.self)
            #expect(try renamed.loadAll().map(\.id) == [1, 2, 3])
            #expect(try renamed.loadAll(2, from: \.value).map(\.id) == [2])
        }
        let store = try Store(at: dir.path)
        defer { store.close() }
        let renamed = try store.datastore(SignNameFormat.self)
        #expect(try renamed.loadAll().map(\.id) == [1, 2, 3])
        #expect(try renamed.loadAll(2, from: \.value).map(\.id) == [2])
        #expect(Self.bytes(try store.datastoreNames()) == Self.bytes([SignNameFormat.name]))
        #expect(try renamed.check().problems.isEmpty)
    }
}
