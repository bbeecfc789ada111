import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The per-transaction state of a write context (`EntityWriteContext`): staged history entries
/// written after the entity's header at the end of each entity of an operation, headers written
/// then and again when a later operation changes them, and the change records (keys noted as
/// numbers of the transaction's key table) that become the change log.
@Suite struct EntityStagedWriteTests {
    /// A value longer than the header's inline limit: the header names its history entry, so
    /// reading it needs that entry written.
    static let long = EntityValue.string(String(repeating: "x", count: RecordHeader.inlineBodyLimit + 10))

    /// Every change of every operation lands, in a store read after a reopen: a header written
    /// at the end of one operation and changed by later ones (set, remove, rename, a get-or-create
    /// by the old name) is written again.
    @Test func laterOperationsInOneTransactionRewriteTheHeader() throws {
        let directory = TemporaryDirectory("entities")
        var store: EntityStore<ReadWrite>? = try EntityStore(at: directory.path)
        let ada = EntityReference.named("Ada", ofType: "person").createIfMissing(with: ["born": 1815])
        let (id, other) = try store!.writeNow { tx in
            let id = try #require(try tx.resolve([ada])[ada])
            try tx.set(["field": "mathematics", "notes": Self.long], of: [ada])
            try tx.set(["field": "engines"], of: [.id(id)])
            try tx.remove(["born"], of: [.id(id)])
            try tx.set(["name": "Augusta"], of: [.id(id)])
            // The old name now resolves to nothing, so this creates another entity.
            let other = try #require(try tx.resolve([ada])[ada])
            #expect(other != id)
            #expect(try tx.record(.id(id))?.properties.mapValues(\.value) == ["field": "engines", "notes": Self.long, "name": "Augusta"])
            return (id, other)
        }
        store = nil
        store = try EntityStore(at: directory.path)
        try store!.readNow { (tx: EntityReadContext) throws in
            #expect(try tx.record(.id(id))?.properties.mapValues(\.value) == ["field": "engines", "notes": Self.long, "name": "Augusta"])
            #expect(try tx.history(of: .id(id), key: "field").map(\.value) == ["mathematics", "engines"])
            #expect(try tx.history(of: .id(id), key: "born").map(\.value) == [1815, nil])
            #expect(try tx.entities(where: "name", equals: "Ada") == [other])
            #expect(try tx.record(.id(other))?.properties.mapValues(\.value) == ["name": "Ada", "born": 1815])
        }
    }

    /// The table of entities a transaction met grows (one at a time, and by room made for all
    /// the references of an operation at once) while an operation's last entity is remembered
    /// by position: each change still lands on its own entity.
    @Test func changesLandWhileTheKnownTableGrows() throws {
        let store = try EntityStore.inMemory()
        try store.writeNow { tx in
            let first = try #require(try tx.resolve([.new("thing", with: ["n": 0])]).values.first)
            var ids = [first]
            for round in 1...3 {
                // The last entity changed, then many new ones in one operation, then it again.
                try tx.set(["n": .int(round)], of: [.id(ids.last!)])
                let references = (0..<(20 * round)).map { EntityReference.named("r\(round)-\($0)", ofType: "thing").createIfMissing(with: ["n": .int(-$0)]) }
                let resolved = try tx.resolve([.id(ids.last!)] + references)
                #expect(resolved.count == references.count + 1)
                try tx.set(["seen": .int(round)], of: [.id(ids.last!)] + references)
                ids.append(try #require(resolved[references.last!]))
            }
            #expect(tx.createdEntities.count == 1 + 20 + 40 + 60)
        }
        try store.readNow { (tx: EntityReadContext) throws in
            for round in 1...3 {
                for index in 0..<(20 * round) {
                    let record = try #require(try tx.record(.named("r\(round)-\(index)", ofType: "thing")))
                    // The last of each round was changed again in the next round.
                    let isLast = index == 20 * round - 1 && round < 3
                    #expect(record["n"] == .int(isLast ? round + 1 : -index), "r\(round)-\(index)")
                    #expect(record["seen"] == .int(isLast ? round + 1 : round), "r\(round)-\(index)")
                }
            }
        }
    }

    /// Two references to one entity in one `set`: the second append finds the first one's
    /// history entry (a long value, so its header names the entry) already written.
    @Test func twoReferencesToOneEntityInOneSet() throws {
        let store = try EntityStore.inMemory()
        let id = try store.writeNow { tx in try #require(try tx.resolve([.new("thing", with: ["name": "t"])]).values.first) }
        let named = EntityReference.named("t", ofType: "thing")
        try store.writeNow { tx in
            let ids = try tx.set([.id(id): ["notes": Self.long], named: ["notes": "short", "size": 3]])
            #expect(ids[.id(id)] == id && ids[named] == id)
            #expect(try tx.history(of: .id(id), key: "notes").count == 2)
        }
        try store.readNow { (tx: EntityReadContext) throws in
            #expect(try tx.history(of: .id(id), key: "notes").count == 2)
            #expect(try tx.record(.id(id), keys: ["size"])?["size"] == 3)
        }
    }

    /// An operation that fails after it staged entries (a relationship to a missing entity,
    /// checked after the entry is staged) fails the transaction: nothing of it, nor of the
    /// operations before it in the same transaction, is written; the next transaction starts clean.
    @Test func aFailedOperationWritesNothingOfWhatItStaged() throws {
        let store = try EntityStore.inMemory()
        let id = try store.writeNow { tx in try #require(try tx.resolve([.new("thing", with: ["n": 1])]).values.first) }
        let missing = EntityID()
        #expect(throws: EntityError.self) {
            try store.writeNow { tx in
                try tx.set(["n": 2, "notes": Self.long], of: [.id(id)])
                do {
                    try tx.set(["a": 1, "b": .entity(missing), "c": Self.long], of: [.id(id)])
                } catch {
                    // Caught by the body: the transaction must still refuse to commit.
                }
            }
        }
        try store.writeNow { tx in
            #expect(try tx.record(.id(id))?.properties.mapValues(\.value) == ["n": 1])
            try tx.set(["n": 3], of: [.id(id)])
        }
        try store.readNow { (tx: EntityReadContext) throws in
            #expect(try tx.history(of: .id(id), key: "n").map(\.value) == [1, 3])
            #expect(try tx.history(of: .id(id), key: "notes").isEmpty)
            #expect(try tx.history(of: .id(id), key: "a").isEmpty)
        }
    }

    /// The change log names every key of every entity a transaction changed, past the 64 keys a
    /// change record keeps as bits, with the kind merged over operations.
    @Test func theChangeLogNamesEveryKey() throws {
        let store = try EntityStore.inMemory()
        let keys = (0..<70).map { "k\($0)" }
        let (created, updated, deleted) = try store.writeNow { tx in
            let created = try #require(try tx.resolve([.new("thing", with: ["a": 1])]).values.first)
            let updated = try #require(try tx.resolve([.new("thing")]).values.first)
            let deleted = try #require(try tx.resolve([.new("thing")]).values.first)
            return (created, updated, deleted)
        }
        let generation = try store.writeNow { tx in
            try tx.set(Dictionary(uniqueKeysWithValues: keys.map { ($0, EntityValue.int(1)) }), of: [.id(updated)])
            try tx.set(["k69": 2, "k0": 2, "z": 1], of: [.id(updated)])
            try tx.set(["k3": 1], of: [.id(deleted)])
            try tx.delete([.id(deleted)])
            return tx.generation + 1
        }
        let changes = try store.database.read { tx in
            let bytes = try #require(try tx.get(EntityChangeLog.key(generation), in: tx.tree(EntityLayout.log)))
            return try bytes.withUnsafeBytes { try EntityChangeLog.decode($0) }
        }
        #expect(changes[created] == nil)
        #expect(changes[updated] == EntityChange(kind: .updated, keys: Set(keys + ["z"])))
        #expect(changes[deleted] == EntityChange(kind: .deleted, keys: ["k3"]))
    }
}
