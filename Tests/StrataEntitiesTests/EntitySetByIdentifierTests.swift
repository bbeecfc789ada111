import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// `set` by identifier reads the entity's header as the first half of rewriting it (one descent
/// for the read and the put, `WriteTransaction.valueForReplacing`). These pin what that path must
/// keep: missing and deleted identifiers, get-or-create by identifier, several sets of one
/// entity in a transaction, and the puts that follow the header landing where they belong.
@Suite struct EntitySetByIdentifierTests {
    @Test func missingAndDeletedIdentifiersAreRefusedAndWriteNothing() throws {
        let store = try EntityStore.inMemory()
        let kept = EntityReference.new("item", with: ["n": 1])
        let gone = EntityReference.new("item", with: ["n": 2])
        let (keptID, goneID) = try store.writeNow { tx in
            let ids = try tx.resolve([kept, gone])
            return (ids[kept]!, ids[gone]!)
        }
        try store.writeNow { tx in _ = try tx.delete([.id(goneID)]) }
        let generation = store.database.generation
        for missing in [EntityID(), goneID] {
            #expect(throws: EntityError.unresolvedReference(reference: EntityReference.id(missing).description)) {
                try store.writeNow { tx in
                    try tx.set(["n": 10], of: [.id(keptID)])
                    try tx.set(["n": 3], of: [.id(missing)])
                }
            }
        }
        #expect(store.database.generation == generation, "a failed write commits nothing")
        let value = try store.readNow { try $0.value("n", of: .id(keptID), as: Int.self) }
        #expect(value == 1)
    }

    @Test func getOrCreateByIdentifierCreatesOnce() throws {
        let store = try EntityStore.inMemory()
        // Another entity first, so the `entries` tree exists and the set by identifier reads
        // (and finds nothing) through `valueForReplacing` instead of returning early.
        let other = EntityReference.new("item", with: ["n": 0])
        let otherID = try #require(try store.writeNow { try $0.resolve([other])[other] })
        let id = EntityID()
        let reference = EntityReference.id(id).createIfMissing(as: "item")
        try store.writeNow { tx in
            try tx.set(["a": 1], of: [reference])
            try tx.set(["b": 2], of: [reference])
            #expect(tx.createdEntities == [id])
        }
        // A later transaction reads the created entity's stored header through `valueForReplacing`.
        try store.writeNow { tx in
            try tx.set(["a": 3], of: [.id(id)])
            try tx.set(["c": 4], of: [reference])
            #expect(tx.createdEntities.isEmpty, "an existing identifier is not created again")
        }
        let record = try store.readNow { try $0.record(.id(id)) }
        #expect(record?.type == "item")
        #expect(try record?.value("a", as: Int.self) == 3)
        #expect(try record?.value("b", as: Int.self) == 2)
        #expect(try record?.value("c", as: Int.self) == 4)
        #expect(try store.readNow { try $0.value("n", of: .id(otherID), as: Int.self) } == 0)
    }

    /// Two live entities `a` (n 1) and `b` (n 2) in a fresh store.
    static func twoEntities() throws -> (EntityStore<ReadWrite>, a: EntityID, b: EntityID) {
        let store = try EntityStore.inMemory()
        let a = EntityReference.new("item", with: ["n": 1])
        let b = EntityReference.new("item", with: ["n": 2])
        let ids = try store.writeNow { try $0.resolve([a, b]) }
        return (store, try #require(ids[a]), try #require(ids[b]))
    }

    // The per-transaction "last entity" slot (`lastKnown`) must follow every change to the
    // transaction's known entities: a stale slot would set a deleted entity or the wrong one.

    @Test func deleteThenSetByIdentifierInOneTransactionIsRefused() throws {
        let (store, a, b) = try Self.twoEntities()
        #expect(throws: EntityError.unresolvedReference(reference: EntityReference.id(a).description)) {
            try store.writeNow { tx in
                try tx.set(["n": 10], of: [.id(a)])
                try tx.delete([.id(a)])
                try tx.set(["n": 11], of: [.id(a)])
            }
        }
        let values = try store.readNow { tx in (try tx.value("n", of: .id(a), as: Int.self), try tx.value("n", of: .id(b), as: Int.self)) }
        #expect(values.0 == 1 && values.1 == 2, "the failed write changed nothing")
    }

    @Test func setByIdentifierAfterAnotherEntitysReadSetsTheRightEntity() throws {
        let (store, a, b) = try Self.twoEntities()
        try store.writeNow { tx in
            try tx.set(["n": 10], of: [.id(a)])
            // Resolving `b` for a read (`find`, its header lookup) adds it to the transaction's
            // known entities; a record read would not (it reads headers in a batch).
            #expect(try tx.value(of: .id(b), key: "n", asOf: .distantFuture) == .int(2))
            try tx.set(["n": 20], of: [.id(a)])
            try tx.set(["m": 30], of: [.id(b)])
            try tx.set(["m": 40], of: [.id(a)])
        }
        let records = try store.readNow { tx in try tx.records([.id(a), .id(b)]) }
        let recordA = try #require(records[.id(a)])
        let recordB = try #require(records[.id(b)])
        #expect(try recordA.value("n", as: Int.self) == 20)
        #expect(try recordA.value("m", as: Int.self) == 40)
        #expect(try recordB.value("n", as: Int.self) == 2)
        #expect(try recordB.value("m", as: Int.self) == 30)
    }

    @Test func relateThenSetByIdentifierInOneTransaction() throws {
        let (store, a, b) = try Self.twoEntities()
        let c = EntityID()
        try store.writeNow { tx in
            // A nested operation (`relate` runs `set`), creating its target by identifier.
            try tx.relate([.id(a)], key: "friend", to: EntityReference.id(c).createIfMissing(as: "item"))
            try tx.set(["n": 10], of: [.id(a)])
            try tx.set(["n": 30], of: [.id(c)])
            try tx.relate([.id(b)], key: "friend", to: .id(a))
            try tx.set(["n": 20], of: [.id(b)])
        }
        let records = try store.readNow { tx in try tx.records([.id(a), .id(b), .id(c)]) }
        let recordA = try #require(records[.id(a)])
        let recordB = try #require(records[.id(b)])
        let recordC = try #require(records[.id(c)])
        #expect(recordA.properties["friend"]?.value == .entity(c))
        #expect(try recordA.value("n", as: Int.self) == 10)
        #expect(recordB.properties["friend"]?.value == .entity(a))
        #expect(try recordB.value("n", as: Int.self) == 20)
        #expect(try recordC.value("n", as: Int.self) == 30)
        #expect(recordC.properties["friend"]?.value == nil)
    }

    @Test func manySetsOfManyEntitiesInOneTransactionAllLand() throws {
        let seed = testSeed("setByIdentifier")
        var random = SeededGenerator(seed: seed)
        let store = try EntityStore.inMemory()
        let references = (0..<300).map { EntityReference.new("item", with: ["name": .string("item \($0)"), "n": .int($0)]) }
        let ids = try store.writeNow { tx in
            let resolved = try tx.resolve(references)
            return references.map { resolved[$0]! }
        }
        var expected = [EntityID: (n: Int, m: Int?)]()
        for (index, id) in ids.enumerated() { expected[id] = (index, nil) }
        try store.writeNow { tx in
            for step in 1_000..<3_000 {
                let id = ids.randomElement(using: &random)!
                if Bool.random(using: &random) {
                    try tx.set(["n": .int(step)], of: [.id(id)])
                    expected[id]!.n = step
                } else {
                    // Two keys, one new to the entity at first: the header grows (no in-place rewrite).
                    try tx.set(["n": .int(step), "m": .string(String(repeating: "m", count: step % 7))], of: [.id(id)])
                    expected[id] = (step, step % 7)
                }
            }
        }
        let records = try store.readNow { tx in try tx.records(ids.map { .id($0) }, keys: ["n", "m"]) }
        for id in ids {
            let record = try #require(records[.id(id)], "seed \(seed)")
            let want = expected[id]!
            #expect(try record.value("n", as: Int.self) == want.n, "seed \(seed)")
            let m = try record.properties["m"].map { _ in try record.value("m", as: String.self) }
            #expect(m == want.m.map { String(repeating: "m", count: $0) }, "seed \(seed)")
        }
        // Every value is findable through the index (the kept-back index entries were written).
        for id in ids.prefix(20) {
            #expect(try store.readNow { try $0.entities(where: "n", equals: .int(expected[id]!.n)) }.contains(id), "seed \(seed)")
        }
    }
}
