import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// Random operations (create, set, remove, delete, get-or-create, compaction) in random
/// transactions, some of which fail and must write nothing, checked against `EntityModel` after
/// every transaction: records, history, as-of reads, type lists, value queries and reverse links,
/// with the store reopened along the way.
@Suite struct EntityModelTests {
    static let keys = ["name", "n", "s", "tags", "link", "links"]
    static let types = ["person", "book", "place"]
    static let dates = (0..<16).map { Date(timeIntervalSinceReferenceDate: 1_000 + Double($0) * 60) }
    static let names = ["Ada", "Grace", "Alan", "Edsger", "Barbara"]

    struct Injected: Error {}

    @Test func storeMatchesModel() throws {
        let seed = testSeed("storeMatchesModel")
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory("entities")
        var options = DatabaseOptions()
        options.durability = .none
        var store: EntityStore<ReadWrite>? = try EntityStore(at: directory.path, options: options)
        var model = EntityModel()
        var failures = 0

        func date(_ random: inout SeededGenerator) -> Date { Self.dates.randomElement(using: &random)! }

        func value(_ key: String, _ pending: EntityModel, _ random: inout SeededGenerator) -> EntityValue {
            switch key {
            case "name": return .string(Self.names.randomElement(using: &random)!)
            case "n": return Bool.random(using: &random) ? .int(Int.random(in: -5...5, using: &random)) : .double(Double(Int.random(in: -3...3, using: &random)) / 2)
            case "s":
                switch Int.random(in: 0..<6, using: &random) {
                case 0: return .bool(Bool.random(using: &random))
                case 1: return .date(date(&random))
                case 2: return .data(Data((0..<Int.random(in: 0...4, using: &random)).map { _ in UInt8.random(in: 0...2, using: &random) }))
                case 3: return .uuid(UUID(uuid: (UInt8.random(in: 0...1, using: &random), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
                // Bodies of 128...130 bytes (label, tag, escaped text): the header keeps one of
                // `RecordHeader.inlineBodyLimit` bytes, the longer ones are read from the history.
                case 4: return .string(String(repeating: "y", count: RecordHeader.inlineBodyLimit - 5 + Int.random(in: 0...2, using: &random)))
                default: return .string(String(repeating: "x", count: Int.random(in: 0...3, using: &random)))
                }
            case "tags": return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in .int(Int.random(in: 0...2, using: &random)) })
            case "link": return .entity(pending.live.keys.sorted().randomElement(using: &random)!)
            default:
                let ids = pending.live.keys.sorted()
                return .array((0..<Int.random(in: 0...3, using: &random)).map { _ in .entity(ids.randomElement(using: &random)!) })
            }
        }

        // STRATA_ENTITY_ROUNDS runs a longer sequence (the default keeps `swift test` quick).
        let rounds = ProcessInfo.processInfo.environment["STRATA_ENTITY_ROUNDS"].flatMap(Int.init) ?? 240
        for round in 0..<rounds {
            var pending = model
            // Per transaction, as the store does: references resolved once keep their entity.
            var memo: [EntityReference: EntityID] = [:]
            let stamp = date(&random)
            let failAtEnd = Int.random(in: 0..<12, using: &random) == 0
            var expectedFailure = false
            do {
                try store!.writeNow(at: stamp) { tx in
                    for _ in 0..<Int.random(in: 1...6, using: &random) {
                        let ids = pending.live.keys.sorted()
                        let roll = Int.random(in: 0..<100, using: &random)
                        if ids.isEmpty || roll < 15 {
                            let type = Self.types.randomElement(using: &random)!
                            let reference = EntityReference.new(type, with: ["n": .int(Int.random(in: 0...3, using: &random))])
                            let id = try #require(try tx.resolve([reference, reference])[reference])
                            guard case .id(let fixed) = reference.match else { Issue.record("new is an id reference"); return }
                            #expect(id == fixed)
                            pending.create(id, type: type, at: stamp, properties: reference.initialProperties)
                        } else if roll < 25 {
                            // Get-or-create by name, twice: one entity.
                            let name = Self.names.randomElement(using: &random)!
                            let reference = EntityReference.named(name, ofType: "person").createIfMissing(with: ["n": 1])
                            let again = EntityReference.named(name, ofType: "person").createIfMissing(with: ["n": 2])
                            let matches = pending.matching("name", EntityValueRange(equalTo: .string(name)), type: "person")
                            if let known = memo[EntityReference.named(name, ofType: "person")] {
                                let resolved = try tx.resolve([reference, again])
                                #expect(resolved[reference] == known && resolved[again] == known)
                            } else if matches.count > 1 {
                                expectedFailure = true
                                #expect(throws: EntityError.ambiguousReference(reference: reference.description, matches: matches.count)) {
                                    try tx.resolve([reference])
                                }
                                throw Injected()
                            } else {
                                let resolved = try tx.resolve([reference, again])
                                let id = try #require(resolved[reference])
                                #expect(resolved[again] == id)
                                if let existing = matches.first {
                                    #expect(id == existing)
                                } else {
                                    pending.create(id, type: "person", at: stamp, properties: ["n": 1, "name": .string(name)])
                                }
                                memo[EntityReference.named(name, ofType: "person")] = id
                            }
                        } else if roll < 70 {
                            let id = ids.randomElement(using: &random)!
                            let key = Self.keys.randomElement(using: &random)!
                            let entryDate = Bool.random(using: &random) ? stamp : date(&random)
                            let newValue = value(key, pending, &random)
                            // Both forms of a one-property set: the dictionary form and `set(_:to:of:at:)`.
                            if Bool.random(using: &random) {
                                try tx.set([key: newValue], of: [.id(id)], at: entryDate)
                            } else {
                                #expect(try tx.set(key, to: newValue, of: .id(id), at: entryDate) == id, "seed \(seed)")
                            }
                            pending.append(PropertyEntry(newValue, datestamp: entryDate), key: key, to: id)
                        } else if roll < 78 {
                            let id = ids.randomElement(using: &random)!
                            let key = Self.keys.randomElement(using: &random)!
                            let entryDate = date(&random)
                            try tx.remove([key], of: [.id(id)], at: entryDate)
                            if pending.currentValue(id, key) != nil { pending.append(PropertyEntry(nil, datestamp: entryDate), key: key, to: id) }
                        } else if roll < 84 {
                            // A labelled entry.
                            let id = ids.randomElement(using: &random)!
                            let entry = PropertyEntry(.string("label"), datestamp: date(&random), type: "kind")
                            try tx.add(["s": [entry]], to: .id(id))
                            pending.append(entry, key: "s", to: id)
                        } else if roll < 94 {
                            let id = ids.randomElement(using: &random)!
                            let report = try tx.delete([.id(id)])
                            let detached = pending.delete(id, at: stamp)
                            memo = memo.filter { $0.value != id }
                            #expect(report.deleted == [id])
                            #expect(Set(report.detached) == detached)
                            #expect(try tx.record(.id(id)) == nil)
                        } else if roll < 97 {
                            let cutoff = date(&random)
                            #expect(try tx.compactHistory(before: cutoff) == pending.compact(before: cutoff))
                        } else {
                            // An id reference to a deleted entity resolves to nothing, even with create.
                            if let gone = pending.deleted.randomElement(using: &random) {
                                #expect(try tx.resolve([EntityReference.id(gone).createIfMissing(as: "person")]).isEmpty)
                            }
                        }
                    }
                    if failAtEnd {
                        expectedFailure = true
                        throw Injected()
                    }
                }
                model = pending
            } catch is Injected {
                #expect(expectedFailure)
                failures += 1
            }
            // A full check costs more than a round: every few rounds, and after each reopen.
            if round % 4 == 3 { try verify(store!, model, &random, round: round) }
            if round % 60 == 59 {
                store = nil
                store = try EntityStore(at: directory.path, options: options)
                try verify(store!, model, &random, round: round)
            }
        }
        #expect(failures > 0)
        print("[storeMatchesModel] \(model.live.count) live, \(model.deleted.count) deleted, \(failures) failed transactions")
    }

    func verify(_ store: EntityStore<ReadWrite>, _ model: EntityModel, _ random: inout SeededGenerator, round: Int) throws {
        let probe = Self.dates.randomElement(using: &random)!.addingTimeInterval(Double.random(in: -30...30, using: &random))
        try store.readNow { tx in
            #expect(Set(try tx.allEntities()) == Set(model.live.keys), "round \(round)")
            for (id, entity) in model.live {
                let record = try #require(try tx.record(.id(id)), "round \(round)")
                #expect(record.type == entity.type && record.created == entity.created && record.modified == entity.modified, "round \(round) \(id)")
                for key in Self.keys {
                    let current = model.current(id, key)
                    #expect(record.properties[key] == (current?.value == nil ? nil : current), "round \(round) \(id) \(key)")
                    let history = try tx.history(of: .id(id), key: key)
                    #expect(history == EntityModel.history(entity.entries[key] ?? []), "round \(round) \(id) \(key)")
                    #expect(try tx.entry(of: .id(id), key: key, asOf: probe) == model.asOf(id, key, probe), "round \(round) \(id) \(key)")
                }
                #expect(Set(try tx.referrers(to: .id(id))) == model.links(to: id), "round \(round) \(id)")
            }
            for id in model.deleted { #expect(try tx.record(.id(id)) == nil) }
            // A bulk read of some keys (the lazy header walk and the result template), with a
            // key no entity has, a key asked twice, and deleted entities among the live ones.
            let asked = Self.keys.filter { _ in Bool.random(using: &random) } + ["absent", Self.keys.randomElement(using: &random)!]
            let references = (Array(model.live.keys) + Array(model.deleted)).sorted().map { EntityReference.id($0) }
            let bulk = try tx.records(references, keys: asked)
            #expect(bulk.count == model.live.count, "round \(round)")
            for (id, entity) in model.live {
                let record = try #require(bulk[.id(id)], "round \(round) \(id)")
                #expect(record.type == entity.type && record.modified == entity.modified, "round \(round) \(id)")
                let expected = Set(asked).reduce(into: [String: PropertyEntry]()) { properties, key in
                    if let current = model.current(id, key), current.value != nil { properties[key] = current }
                }
                #expect(record.properties == expected, "round \(round) \(id) \(asked)")
            }
            for type in Self.types { #expect(try tx.entities(ofType: type) == model.entities(ofType: type), "round \(round) \(type)") }
            let lower = EntityValue.int(Int.random(in: -5...3, using: &random))
            let ranges = [EntityValueRange(lower...), EntityValueRange(lower..<EntityValue.int(3)), EntityValueRange(...EntityValue.double(0.5)),
                          EntityValueRange(equalTo: .int(1))]
            for range in ranges {
                #expect(try tx.entities(where: "n", in: range) == model.matching("n", range), "round \(round) \(range)")
                #expect(try tx.entities(where: "n", in: range, limit: 3, order: .descending) == Array(model.matching("n", range).reversed().prefix(3)))
            }
            // Every value "n" takes, by equality: values set, superseded and set back leave stale
            // index entries (see `EntityLayout`), which must never be returned.
            for n in -5...5 {
                for value in [EntityValue.int(n), .double(Double(n) / 2)] {
                    #expect(try tx.entities(where: "n", equals: value) == model.matching("n", EntityValueRange(equalTo: value)), "round \(round) \(value)")
                }
            }
            let name = EntityValue.string(Self.names.randomElement(using: &random)!)
            #expect(try tx.entities(where: "name", equals: name, ofType: "person") == model.matching("name", EntityValueRange(equalTo: name), type: "person"))
            let tags = EntityValueRange(lower: .array([.int(1)]), upper: .array([.int(2), .int(0)]), upperInclusive: true)
            #expect(try tx.entities(where: "tags", in: tags) == model.matching("tags", tags))
        }
    }
}
