import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// `set(_:to:of:at:)`, the one-property form of `set`: it must do exactly what
/// `set([key: value], of: [reference], at:)` does (entries, header, indexes, change log,
/// errors), only without the dictionaries and array of that form.
@Suite struct EntitySetOnePropertyTests {
    /// The same random changes through both forms, in two stores: every record, history, value
    /// query and change-log entry agrees.
    @Test func matchesTheDictionaryForm() throws {
        let seed = testSeed("setOneProperty")
        var random = SeededGenerator(seed: seed)
        let stores = [try EntityStore.inMemory(), try EntityStore.inMemory()]
        let ids = (0..<40).map { _ in EntityID() }
        let keys = ["n", "name", "friend", "tags"]
        let start = Date(timeIntervalSinceReferenceDate: 1_000_000)
        for store in stores {
            _ = try store.writeNow(at: start) { tx in
                try tx.resolve(ids.enumerated().map { EntityReference.id($0.element).createIfMissing(as: "item", with: ["n": .int($0.offset)]) })
            }
        }
        // Each transaction's changes drawn once, then applied to both stores.
        var commits: [[[EntityID: EntityChange]]] = [[], []]
        for round in 0..<20 {
            var changes: [(id: EntityID, key: String, value: EntityValue, at: Date?)] = []
            for _ in 0..<15 {
                let id = ids.randomElement(using: &random)!
                let key = keys.randomElement(using: &random)!
                let value: EntityValue = switch key {
                case "n": .int(Int.random(in: 0..<5, using: &random))
                case "name": .string("name \(Int.random(in: 0..<5, using: &random))")
                case "tags": .array((0..<Int.random(in: 0..<4, using: &random)).map { _ in
                    Bool.random(using: &random) ? .int(Int.random(in: 0..<3, using: &random)) : .entity(ids.randomElement(using: &random)!)
                })
                default: .entity(ids.randomElement(using: &random)!)
                }
                // Some entries older than the current one (they go into the history only).
                let at: Date? = switch Int.random(in: 0..<3, using: &random) {
                case 0: nil
                case 1: start.addingTimeInterval(Double(round * 100 + Int.random(in: 0..<100, using: &random)))
                default: start.addingTimeInterval(-Double(Int.random(in: 1..<100, using: &random)))
                }
                changes.append((id, key, value, at))
            }
            for (index, store) in stores.enumerated() {
                let generation = try store.writeNow(at: start.addingTimeInterval(Double(round * 100 + 50))) { tx in
                    for change in changes {
                        if index == 0 {
                            try tx.set([change.key: change.value], of: [.id(change.id)], at: change.at)
                        } else {
                            #expect(try tx.set(change.key, to: change.value, of: .id(change.id), at: change.at) == change.id, "seed \(seed)")
                        }
                    }
                    return tx.generation + 1
                }
                commits[index].append(try store.database.read { tx in
                    let bytes = try #require(try tx.get(EntityChangeLog.key(generation), in: tx.tree(EntityLayout.log)))
                    return try bytes.withUnsafeBytes { try EntityChangeLog.decode($0) }
                })
            }
        }
        let references = ids.map { EntityReference.id($0) }
        let records = try stores.map { store in try store.readNow { try $0.records(references) } }
        #expect(records[0] == records[1], "seed \(seed)")
        for id in ids {
            for key in keys {
                let histories = try stores.map { store in try store.readNow { try $0.history(of: .id(id), key: key) } }
                #expect(histories[0] == histories[1], "seed \(seed)")
            }
        }
        for n in 0..<5 {
            let found = try stores.map { store in try store.readNow { try $0.entities(where: "n", equals: .int(n)) } }
            #expect(found[0] == found[1], "seed \(seed)")
        }
        let referrers = try stores.map { store in try store.readNow { try Set($0.referrers(to: .id(ids[0]))) } }
        #expect(referrers[0] == referrers[1], "seed \(seed)")
        #expect(commits[0] == commits[1], "seed \(seed)")
    }

    /// A deleted entity is not found by its identifier through the one-property form: the set is
    /// `unresolvedReference` and nothing commits, as with the dictionary form.
    @Test func aDeletedEntityIsNotSetAndNothingCommits() throws {
        let store = try EntityStore.inMemory()
        let ada = EntityReference.new("person", with: ["name": "Ada"])
        let id = try #require(try store.writeNow { try $0.resolve([ada]) }[ada])
        _ = try store.writeNow { tx in try tx.delete([.id(id)]) }
        let generation = store.database.generation
        #expect {
            try store.writeNow { tx in try tx.set("age", to: 38, of: .id(id)) }
        } throws: { error in
            if case EntityError.unresolvedReference = error { return true }
            return false
        }
        #expect(store.database.generation == generation, "a failed write commits nothing")
        #expect(try store.readNow { try $0.records([.id(id)]) }[.id(id)] == nil)
    }

    @Test func aMissingEntityOrABadKeyIsRefusedAndNothingCommits() throws {
        let store = try EntityStore.inMemory()
        let kept = EntityReference.new("item", with: ["n": 1])
        let keptID = try #require(try store.writeNow { try $0.resolve([kept])[kept] })
        let generation = store.database.generation
        let missing = EntityID()
        #expect(throws: EntityError.unresolvedReference(reference: EntityReference.id(missing).description)) {
            try store.writeNow { tx in
                try tx.set("n", to: 10, of: .id(keptID))
                try tx.set("n", to: 3, of: .id(missing))
            }
        }
        #expect(throws: EntityError.emptyName(what: "property key")) {
            try store.writeNow { tx in try tx.set("", to: 10, of: .id(keptID)) }
        }
        // A value naming an entity that does not exist.
        #expect {
            try store.writeNow { tx in try tx.set("friend", to: .entity(missing), of: .id(keptID)) }
        } throws: { error in
            if case EntityError.unresolvedReference = error { return true }
            return false
        }
        #expect(store.database.generation == generation, "a failed write commits nothing")
        #expect(try store.readNow { try $0.value("n", of: .id(keptID), as: Int.self) } == 1)
    }

    @Test func getOrCreateReferencesCreateOnceAndReturnTheEntity() async throws {
        let store = try EntityStore.inMemory()
        let byName = EntityReference.named("ada", ofType: "person").createIfMissing()
        let id = try store.writeNow { tx in
            let first = try tx.set("field", to: "mathematics", of: byName)
            #expect(try tx.set("born", to: 1815, of: byName) == first)
            #expect(tx.createdEntities == [first])
            return first
        }
        // The store's one-transaction form.
        #expect(try await store.set("field", to: "computing", of: byName) == id)
        let record = try #require(try store.readNow { try $0.record(.id(id)) })
        #expect(record.type == "person")
        #expect(try record.value("name", as: String.self) == "ada")
        #expect(try record.value("field", as: String.self) == "computing")
        #expect(try record.value("born", as: Int.self) == 1815)
        #expect(try store.readNow { try $0.history(of: .id(id), key: "field") }.map(\.value) == [.string("mathematics"), .string("computing")])
    }
}
