import Foundation
import Strata
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// An equality query inside a write transaction answers from the index entries the transaction
/// keeps back in memory (`keptBackIndexMatches`) together with the stored ones: matches come in
/// the order of a query after a commit, stale kept-back entries are skipped, types filter them,
/// and past `keptBackSearchLimit` entries the transaction writes them back and reads the index.
@Suite struct EntityKeptBackIndexTests {
    @Test func equalityQueriesSeeKeptBackAndStoredEntriesInOrder() throws {
        let store = try EntityStore.inMemory()
        let stored = try store.writeNow { tx in
            try tx.resolve([.new("person", with: ["n": 7]), .new("place", with: ["n": 7])]).values.sorted()
        }
        let all = try store.writeNow { tx in
            let storedOrder = try tx.entities(where: "n", equals: 7)
            #expect(Set(storedOrder) == Set(stored))
            let fresh = try #require(try tx.resolve([.new("person", with: ["n": 7])]).values.first)
            let other = try #require(try tx.resolve([.new("person", with: ["n": 7])]).values.first)
            // Kept back (not written yet), after the stored ones in both orders.
            #expect(try tx.entities(where: "n", equals: 7) == storedOrder + [fresh, other])
            #expect(try tx.entities(where: "n", equals: 7, order: .descending) == [other, fresh] + storedOrder.reversed())
            #expect(try tx.entities(where: "n", equals: 7, limit: 3) == Array((storedOrder + [fresh, other]).prefix(3)))
            let places = try tx.entities(ofType: "place")
            #expect(try tx.entities(where: "n", equals: 7, ofType: "place") == places)
            #expect(try tx.entities(where: "n", equals: 7, ofType: "person") == storedOrder.filter { !places.contains($0) } + [fresh, other])
            // A kept-back entry superseded in the same transaction is stale.
            try tx.set(["n": 8], of: [.id(fresh)])
            #expect(try tx.entities(where: "n", equals: 7) == storedOrder + [other])
            #expect(try tx.entities(where: "n", equals: 8) == [fresh])
            // Get-or-create by a kept-back value finds it instead of creating another.
            let byValue = EntityReference.whereKey("n", equals: 8, ofType: "person").createIfMissing()
            #expect(try tx.resolve([byValue])[byValue] == fresh)
            return storedOrder + [other]
        }
        // After the commit, the index says the same.
        #expect(try store.readNow { try $0.entities(where: "n", equals: 7) } == all)
    }

    /// A stored entity set to another value and back within one transaction: its stored entry
    /// for the value is stale (older sequence), its kept-back one current; an equality query
    /// finds it once, and the value it held in between finds nothing. Get-or-create by the
    /// original value finds it instead of creating another.
    @Test func aValueSetAwayAndBackInOneTransactionMatchesOnce() throws {
        let store = try EntityStore.inMemory()
        let ada = try store.writeNow { tx in
            try #require(try tx.resolve([.new("person", with: ["name": "Ada"])]).values.first)
        }
        try store.writeNow { tx in
            try tx.set(["name": "Bob"], of: [.id(ada)])
            #expect(try tx.entities(where: "name", equals: "Ada").isEmpty)
            #expect(try tx.entities(where: "name", equals: "Bob") == [ada])
            try tx.set(["name": "Ada"], of: [.id(ada)])
            #expect(try tx.entities(where: "name", equals: "Ada") == [ada])
            #expect(try tx.entities(where: "name", equals: "Ada", order: .descending) == [ada])
            #expect(try tx.entities(where: "name", equals: "Bob").isEmpty)
            let byName = EntityReference.whereKey("name", equals: "Ada", ofType: "person").createIfMissing()
            #expect(try tx.resolve([byName])[byName] == ada)
        }
        #expect(try store.readNow { try $0.entities(where: "name", equals: "Ada") } == [ada])
        #expect(try store.readNow { try $0.entities(where: "name", equals: "Bob") }.isEmpty)
        #expect(try store.readNow { try $0.count(ofType: "person") } == 1)
    }

    @Test func manyKeptBackEntriesAreWrittenBackBeforeTheQuery() throws {
        let store = try EntityStore.inMemory()
        let count = EntityWriteContext.keptBackSearchLimit + 10
        try store.writeNow { tx in
            // More kept-back entries than a query searches in memory.
            var items: [EntityID] = []
            for index in 0..<count { items.append(try #require(try tx.resolve([.new("item", with: ["i": .int(index)])]).values.first)) }
            #expect(try tx.entities(where: "i", equals: 5) == [items[5]])
            var created: [EntityID] = []
            for index in 0..<count {
                let reference = EntityReference.named("Item \(index % 7)", ofType: "item").createIfMissing()
                created.append(try #require(try tx.resolve([reference])[reference]))
            }
            // Seven names, each created once and found afterwards.
            #expect(Set(created).count == 7)
            for index in 0..<7 { #expect(try tx.entities(where: "name", equals: .string("Item \(index)")) == [created[index]]) }
            #expect(try tx.entities(where: "i", equals: .int(count - 1)) == [items[count - 1]])
        }
        #expect(try store.readNow { try $0.count(ofType: "item") } == count + 7)
    }
}
