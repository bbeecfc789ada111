import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The lazy value index (`EntityLayout`): a superseded value keeps its index entry (stale), and
/// no query, get-or-create or ambiguity check may ever see it: not after setting a value back,
/// not inside the transaction that superseded it, not after a removal or a deletion, not after
/// a reopen. Compaction removes exactly the stale entries.
@Suite struct EntityValueIndexTests {
    /// How many entries the `values` tree holds.
    static func indexEntries(_ database: Database) throws -> Int {
        try database.read { tx in
            guard let values = try tx.treeIfPresent(EntityLayout.values) else { return 0 }
            var count = 0
            try tx.scan(values) { _, _ in
                count += 1
                return true
            }
            return count
        }
    }

    /// A write context keeps its index entries back until the index is read or the transaction
    /// ends: its own queries, get-or-create by another reference, and a deletion in the same
    /// transaction see them.
    @Test func aTransactionSeesItsOwnIndexEntries() throws {
        let store = try EntityStore.inMemory()
        let ids = try store.writeNow { tx in
            let ada = try #require(try tx.resolve([.new("person", with: ["name": "Ada", "n": 1])]).values.first)
            let grace = try #require(try tx.resolve([.new("person", with: ["name": "Grace", "n": 1])]).values.first)
            #expect(try tx.entities(where: "name", equals: "Ada") == [ada])
            #expect(try tx.entities(where: "n", equals: 1) == [ada, grace])
            // Another reference to the same name (untyped: another memo key) finds her.
            let again = EntityReference.named("Ada").createIfMissing(as: "person")
            #expect(try tx.resolve([again])[again] == ada)
            try tx.delete([.id(grace)])
            try tx.set(["n": 2], of: [.id(ada)])
            #expect(try tx.entities(where: "n", equals: 1).isEmpty)
            return (ada, grace)
        }
        try store.readNow { (tx: EntityReadContext) throws in
            #expect(try tx.entities(where: "n", equals: 2) == [ids.0])
            #expect(try tx.entities(where: "name", equals: "Grace").isEmpty)
        }
    }

    @Test func staleEntriesAreNeverFound() throws {
        let directory = TemporaryDirectory("entities")
        var store: EntityStore<ReadWrite>? = try EntityStore(at: directory.path)
        let a = EntityReference.new("person", with: ["n": 1, "name": "Ada"])
        let b = EntityReference.new("person", with: ["n": 2])
        let c = EntityReference.new("book", with: ["n": 1])
        let ids = try store!.writeNow { tx in try tx.resolve([a, b, c]) }
        let (ia, ib, ic) = (ids[a]!, ids[b]!, ids[c]!)

        // Away and back again, in separate transactions and within one.
        try store!.writeNow { tx in _ = try tx.set(["n": 2], of: [a]) }
        try store!.writeNow { tx in _ = try tx.set(["n": 1], of: [a]) }
        try store!.writeNow { tx in
            try tx.set(["n": 3], of: [b])
            try tx.set(["n": 5], of: [a])
            #expect(try tx.entities(where: "n", equals: 1) == [ic], "the transaction's own stale entry")
            #expect(try tx.entities(where: "n", equals: 5) == [ia])
            try tx.set(["n": 1], of: [a])
        }
        // Renamed: the old name resolves to nothing, so get-or-create makes a new entity.
        try store!.writeNow { tx in _ = try tx.set(["name": "Grace"], of: [a]) }

        func check(_ store: EntityStore<ReadWrite>, _ moment: String) throws {
            try store.readNow { (tx: EntityReadContext) throws in
                #expect(try tx.entities(where: "n", equals: 1) == [ic, ia], "\(moment): once each, by when they got it")
                #expect(try tx.entities(where: "n", equals: 2).isEmpty, "\(moment)")
                #expect(try tx.entities(where: "n", equals: 5).isEmpty, "\(moment)")
                #expect(try tx.entities(where: "n", equals: 3) == [ib], "\(moment)")
                #expect(try tx.entities(where: "n", in: EntityValueRange(.int(1)...(.int(5)))) == [ic, ia, ib], "\(moment)")
                #expect(try tx.entities(where: "n", equals: 1, limit: 1, order: .descending) == [ia], "\(moment)")
                #expect(try tx.entities(where: "n", equals: 1, ofType: "person") == [ia], "\(moment)")
                #expect(try tx.existing([.named("Ada", ofType: "person")]).isEmpty, "\(moment)")
                #expect(try tx.existing([.named("Grace", ofType: "person")]) == [.named("Grace", ofType: "person"): ia], "\(moment)")
            }
        }
        try check(store!, "before compaction")
        let stale = try Self.indexEntries(store!.database)
        // Current: n of a (1), b (3) and c (1), name of a (Grace). Stale: a's n 1, 2, 5 and 1
        // again, b's n 2, a's name Ada.
        #expect(stale == 4 + 6)

        store = nil
        store = try EntityStore(at: directory.path)
        try check(store!, "reopened")
        #expect(try store!.writeNow { tx in try tx.compactHistory(before: .distantPast) } == 0)
        #expect(try Self.indexEntries(store!.database) == 4, "compaction removes exactly the stale entries")
        try check(store!, "compacted")

        // A new Ada is created, not the renamed one; a removal and a deletion leave nothing found.
        let ada = EntityReference.named("Ada", ofType: "person").createIfMissing()
        let newAda = try #require(try store!.writeNow { tx in try tx.resolve([ada])[ada] })
        #expect(newAda != ia)
        try store!.writeNow { tx in
            try tx.remove(["n"], of: [a])
            try tx.delete([b])
        }
        try store!.readNow { (tx: EntityReadContext) throws in
            #expect(try tx.entities(where: "n", in: EntityValueRange(.int(0)...(.int(9)))) == [ic])
            #expect(try tx.entities(where: "name", equals: "Ada") == [newAda])
        }
    }
}
