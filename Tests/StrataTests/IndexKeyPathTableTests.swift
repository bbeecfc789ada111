import Dispatch
import Foundation
import Testing
@testable import Strata
import StrataTestFixtures

/// `IndexKeyPathTable`, which finds a query's index by its key path without a lock, and the stale
/// index flag queries check before the stale set.
@Suite struct IndexKeyPathTableTests {
    private struct Inner { var value = 0 }
    private struct Outer { var inner = Inner() }

    /// A new key path object each call (`appending` builds one), all equal to each other.
    private static func freshKeyPath() -> AnyKeyPath {
        (\Outer.inner).appending(path: \Inner.value)
    }

    @Test func keyPathsAreFoundByIdentityUntilTheTableIsFull() throws {
        let table = IndexKeyPathTable()
        let keyPaths = (0..<(IndexKeyPathTable.capacity + 4)).map { _ in Self.freshKeyPath() }
        try #require(keyPaths[0] !== keyPaths[1], "appending must build distinct objects for this test")
        for (position, keyPath) in keyPaths.enumerated() {
            #expect(table.position(of: keyPath) == nil)
            #expect(table.isAtCapacity == (position >= IndexKeyPathTable.capacity), "before key path \(position)")
            table.remember(keyPath, position: position)
            table.remember(keyPath, position: 99) // a second remember changes nothing
        }
        for (position, keyPath) in keyPaths.enumerated() {
            // Beyond the capacity nothing is remembered: the caller resolves those the slow way.
            #expect(table.position(of: keyPath) == (position < IndexKeyPathTable.capacity ? position : nil), "key path \(position)")
        }
        // An equal key path that is another object is not the one remembered.
        #expect(table.position(of: Self.freshKeyPath()) == nil)
    }

    @Test func concurrentRemembersAndLookupsAgree() {
        let table = IndexKeyPathTable()
        let keyPaths = KeyPaths((0..<IndexKeyPathTable.capacity).map { _ in Self.freshKeyPath() })
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<2_000 {
                let index = (round * 7 + thread) % keyPaths.all.count
                if let found = table.position(of: keyPaths.all[index]), found != index { failures.add() }
                table.remember(keyPaths.all[index], position: index)
                if table.position(of: keyPaths.all[index]) != index { failures.add() }
            }
        }
        #expect(failures.value == 0)
    }

    /// A declared index that is not built is refused on every query, also once its key path is in
    /// the table, while other indexes answer; after `warm` it answers too.
    @Test func aStaleIndexIsRefusedEveryTimeUntilItIsBuilt() throws {
        let dir = TemporaryDirectory()
        do {
            let items = try Store(at: dir.path).datastore(ItemFormatAfterRename.self)
            for i in 0..<20 { try items.persist(RenamedItem(id: i, name: "item \(i)", tags: [], shelf: i % 4)) }
        }
        let items = try Store(at: dir.path).datastore(ItemFormatWithShelfIndex.self)
        #expect(items.indexesNeedingBuild == ["shelf"])
        for _ in 0..<3 {
            #expect(throws: DatastoreError.indexNotBuilt(datastore: "items", index: "shelf")) { _ = try items.loadAll(2, from: \.shelf) }
            #expect(try items.loadAll("item 3", from: \.name).map(\.id) == [3])
        }
        try items.warm()
        #expect(items.indexesNeedingBuild.isEmpty)
        for _ in 0..<3 {
            #expect(try items.loadAll(2, from: \.shelf).map(\.id) == [2, 6, 10, 14, 18])
            #expect(try items.loadAll("item 3", from: \.name).map(\.id) == [3])
        }
    }
}

/// A datastore whose instances are bare `UUID`s: the binary coder stores those in a special form
/// (16 bytes, where `UUID`'s own `Codable` writes a string), which the schema decides once per type
/// (`DatastoreSchema.instanceIsSpecialValue`); loads must still take the special path.
@Suite struct SpecialValueInstanceTests {
    struct Tokens: DatastoreFormat {
        static let name = "tokens"
        enum Version: String, DatastoreVersion { case first = "2026-11" }
        static let currentVersion = Version.first
        typealias Instance = UUID
        typealias Identifier = UUID
        static func identifier(of instance: UUID) -> UUID { instance }
    }

    @Test func bareUUIDsRoundTrip() throws {
        let dir = TemporaryDirectory()
        let tokens = try Store(at: dir.path).datastore(Tokens.self)
        let ids = (0..<5).map { _ in UUID() }
        for id in ids { try tokens.persist(id) }
        for id in ids { #expect(try tokens.load(id) == id) }
        #expect(try tokens.loadAll() == ids.sorted { $0.orderedKeyBytes.lexicographicallyPrecedes($1.orderedKeyBytes) })
    }
}

/// Key path objects are immutable: sharing them between the test's threads is safe.
private struct KeyPaths: @unchecked Sendable {
    let all: [AnyKeyPath]
    init(_ all: [AnyKeyPath]) { self.all = all }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
