import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

struct Person: EntityKind {
    static let entityType = "person"
    let record: EntityRecord
    init(record: EntityRecord) { self.record = record }
    var name: String { get throws { try value("name") } }
}

/// The public API end to end (async), and every bad input the issue names.
@Suite struct EntityAPITests {
    @Test func getOrCreateRelationshipsAndKinds() async throws {
        let store = try EntityStore.inMemory()
        store.register(Person.self)
        let ada = EntityReference.named("Ada", ofType: "person").createIfMissing(with: ["born": 1815])
        let book = EntityReference.new("book", with: ["title": "Notes"])
        let (bookID, created) = try await store.write { tx in
            (try tx.relate([book], key: "author", to: ada), tx.createdEntities.count)
        }
        #expect(created == 2)
        let ids = try await store.resolve([ada, book])
        #expect(ids[ada] == bookID)
        // Initial properties are ignored when she exists.
        let again = EntityReference.named("Ada", ofType: "person").createIfMissing(with: ["born": 1900])
        #expect(try await store.resolve([again])[again] == bookID)
        let records = try await store.records([ada], keys: ["born", "missing"])
        #expect(try records[ada]?.value("born", as: Int.self) == 1815)
        #expect(records[ada]?.properties.keys.sorted() == ["born"])
        let objects = try await store.objects([ada, book])
        #expect(try (objects[ada] as? Person)?.name == "Ada")
        #expect(objects[book] is AnyEntity)
        #expect(try await store.objects(Person.self).map(\.id) == [bookID])
        let bookEntity = try #require(try await store.resolve(existing: [book])[book])
        #expect(try await store.referrers(to: ada) == [EntityLink(source: bookEntity, key: "author")])
        #expect(try await store.referrers(to: ada, through: "editor").isEmpty)
        #expect(try await store.entities(where: "author", equals: .entity(bookID)) == [bookEntity])
    }

    @Test func historyAsOfAndCompaction() async throws {
        let store = try EntityStore.inMemory()
        let thing = EntityReference.new("thing")
        let day = { (n: Double) in Date(timeIntervalSinceReferenceDate: n * 86_400) }
        try await store.set(["v": 1], of: [thing], at: day(1))
        try await store.set(["v": 2], of: [thing], at: day(2))
        try await store.remove(["v"], of: [thing], at: day(3))
        try await store.set(["v": 4], of: [thing], at: day(4))
        // Same datestamp: insertion order decides.
        try await store.set(["v": 5], of: [thing], at: day(4))
        #expect(try await store.history(of: thing, key: "v").map(\.value) == [1, 2, nil, 4, 5])
        #expect(try await store.value(of: thing, key: "v", asOf: day(2.5)) == 2)
        #expect(try await store.value(of: thing, key: "v", asOf: day(3.5)) == nil)
        #expect(try await store.value(of: thing, key: "v", asOf: day(0)) == nil)
        #expect(try await store.compactHistory(before: day(3.5)) == 2)
        #expect(try await store.history(of: thing, key: "v").map(\.value) == [nil, 4, 5])
        #expect(try await store.compactHistory(before: day(10)) == 2)
        #expect(try await store.history(of: thing, key: "v").map(\.value) == [5])
        #expect(try await store.records([thing])[thing]?["v"] == 5)
    }

    @Test func deletionDetachesRelationships() async throws {
        let store = try EntityStore.inMemory()
        let target = EntityReference.new("person")
        let other = EntityReference.new("person")
        let single = EntityReference.new("book")
        let many = EntityReference.new("shelf")
        let ids = try await store.resolve([target, other, single, many])
        try await store.set([single: ["author": .entity(ids[target]!)],
                             many: ["authors": [.entity(ids[target]!), .entity(ids[other]!)]]])
        let report = try await store.delete([target])
        #expect(report.deleted == [ids[target]!])
        #expect(Set(report.detached) == [EntityLink(source: ids[single]!, key: "author"), EntityLink(source: ids[many]!, key: "authors")])
        let after = try await store.records([single, many, target])
        #expect(after[target] == nil)
        #expect(after[single]?["author"] == nil)
        #expect(after[many]?["authors"] == [.entity(ids[other]!)])
        #expect(try await store.history(of: single, key: "author").count == 2)
        // The identifier never comes back, even through get-or-create.
        #expect(try await store.resolve([.id(ids[target]!)]).isEmpty)
        await #expect(throws: EntityError.unresolvedReference(reference: EntityReference.id(ids[target]!).description)) {
            try await store.set(["x": 1], of: [.id(ids[target]!)])
        }
        #expect(try await store.entities(ofType: "person") == [ids[other]!])
    }

    @Test func rangesAreExactForEveryKindAndLongValues() async throws {
        let store = try EntityStore.inMemory()
        let maximum = store.database.maximumKeySize
        // Strings longer than an index key can hold share their indexed prefix.
        let prefix = String(repeating: "p", count: maximum)
        let values: [EntityValue] = [.int(-3), .int(7), .double(-0.5), .double(2.25), .string("b"), .string("ab"),
                                     .string(prefix + "a"), .string(prefix + "b"), .string(prefix + "c"),
                                     .date(Date(timeIntervalSince1970: -10)), .bool(true), .data(Data([0, 1])), .uuid(UUID()),
                                     .array(["x", 1]), .data(Data(repeating: 7, count: maximum * 2))]
        let references = values.map { EntityReference.new("v", with: ["value": $0]) }
        let ids = try await store.resolve(references)
        let byValue = Dictionary(uniqueKeysWithValues: zip(values, references.map { ids[$0]! }))
        for value in values {
            #expect(try await store.entities(where: "value", equals: value) == [byValue[value]!], "\(value)")
        }
        let middle = try await store.entities(where: "value", in: EntityValueRange(.string(prefix + "a") ... .string(prefix + "b")))
        #expect(middle == [byValue[.string(prefix + "a")]!, byValue[.string(prefix + "b")]!])
        // Truncated values come back in value order, also with a limit and descending.
        let long = EntityValueRange(.string(prefix) ... .string(prefix + "z"))
        #expect(try await store.entities(where: "value", in: long, limit: 2, order: .descending)
                == [byValue[.string(prefix + "c")]!, byValue[.string(prefix + "b")]!])
        #expect(try await store.entities(where: "value", in: long, limit: 1) == [byValue[.string(prefix + "a")]!])
        let ints = try await store.entities(where: "value", in: EntityValueRange(.int(Int.min)...(.int(Int.max))))
        #expect(ints == [byValue[.int(-3)]!, byValue[.int(7)]!])
        let doubles = try await store.entities(where: "value", in: EntityValueRange(.double(-1)..<(.double(3))), order: .descending)
        #expect(doubles == [byValue[.double(2.25)]!, byValue[.double(-0.5)]!])
    }

    @Test func badInputGetsTypedErrorsAndWritesNothing() async throws {
        let store = try EntityStore.inMemory()
        let ada = EntityReference.new("person", with: ["name": "Ada", "born": 1815])
        let adaID = try #require(try await store.resolve([ada])[ada])
        let generation = store.database.generation
        // Reading: unknown key, wrong type, each naming entity and key.
        await #expect(throws: EntityError.unknownKey(entity: adaID, key: "died")) {
            _ = try await store.read { try $0.value("died", of: ada, as: Int.self) }
        }
        await #expect(throws: EntityError.wrongValueType(entity: adaID, key: "born", expected: "string", found: "int")) {
            _ = try await store.read { try $0.value("born", of: ada, as: String.self) }
        }
        // Over-long key and type label: typed errors, nothing committed.
        let long = String(repeating: "k", count: store.database.maximumKeySize)
        let maximum = store.database.maximumKeySize - 96
        await #expect(throws: EntityError.keyTooLong(key: long, bytes: long.utf8.count + 2, maximum: maximum)) {
            try await store.set(["ok": 1, long: 2], of: [ada])
        }
        await #expect(throws: EntityError.typeLabelTooLong(label: long, bytes: long.utf8.count + 2, maximum: maximum)) {
            try await store.resolve([.new(long)])
        }
        await #expect(throws: EntityError.emptyName(what: "property key")) { try await store.set(["": 1], of: [ada]) }
        // Reading an empty key is the same mistake, not damage: its prefix is the header's key.
        await #expect(throws: EntityError.emptyName(what: "property key")) { _ = try await store.history(of: ada, key: "") }
        await #expect(throws: EntityError.emptyName(what: "property key")) { _ = try await store.value(of: ada, key: "", asOf: Date()) }
        // Ambiguous reference: the count.
        try await store.resolve([.new("person", with: ["name": "Twin"]), .new("person", with: ["name": "Twin"]), .new("robot", with: ["name": "Twin"])])
        let afterTwins = store.database.generation
        await #expect(throws: EntityError.ambiguousReference(reference: EntityReference.named("Twin").description, matches: 3)) {
            try await store.set(["x": 1], of: [.named("Twin")])
        }
        await #expect(throws: EntityError.ambiguousReference(reference: EntityReference.named("Twin", ofType: "person").description, matches: 2)) {
            _ = try await store.records([.named("Twin", ofType: "person")])
        }
        #expect(try await store.resolve(existing: [.named("Twin", ofType: "robot")]).count == 1)
        // No type to create with.
        await #expect(throws: EntityError.unresolvedReference(reference: EntityReference.named("Nobody").createIfMissing().description)) {
            try await store.resolve([.named("Nobody").createIfMissing()])
        }
        // A relationship to nothing.
        await #expect(throws: EntityError.self) { try await store.set(["friend": .entity(EntityID())], of: [ada]) }
        // An operation interrupted halfway writes nothing.
        struct Stop: Error {}
        await #expect(throws: Stop.self) {
            try await store.write { tx in
                try tx.set(["born": 1], of: [ada])
                try tx.delete([ada])
                throw Stop()
            }
        }
        #expect(store.database.generation == afterTwins && afterTwins == generation + 1)
        #expect(try await store.records([ada])[ada]?["born"] == 1815)
        #expect(try await store.history(of: ada, key: "born").count == 1)
        // A read-only database handle cannot become a writable entity store.
        let directory = TemporaryDirectory("ro")
        _ = try Database(path: directory.path)
        let reader = try Database(path: directory.path, mode: .readOnly)
        #expect(throws: EntityError.readOnly(path: directory.path)) { _ = try EntityStore<ReadWrite>(database: reader) }
        // A read-only store with no entities yet reads as empty.
        #expect(try await EntityStore(readingFrom: reader).entities(ofType: "person").isEmpty)
    }

    /// An operation that throws halfway (here after writing the history entry of a relationship
    /// whose target does not exist) fails the whole write even when the body catches the error:
    /// committing would leave a history entry the entity's header does not name, and compacting
    /// would then drop the current value. Found by review; this test failed before the fix
    /// (the write committed and the entity became unreadable after compaction).
    @Test func caughtErrorInsideAWriteFailsTheWrite() async throws {
        let store = try EntityStore.inMemory()
        let bio = String(repeating: "b", count: 300)  // longer than a header keeps inline
        let ada = EntityReference.new("person", with: ["name": "Ada"])
        let id = try #require(try await store.resolve([ada])[ada])
        try await store.set(["bio": .string(bio)], of: [.id(id)], at: Date(timeIntervalSince1970: 1000))
        let generation = store.database.generation
        #expect(throws: EntityError.self) {
            try store.writeNow(at: Date(timeIntervalSince1970: 2000)) { tx in
                do { try tx.set(["bio": .entity(EntityID())], of: [.id(id)]) } catch {}
                try tx.set(["name": "Ada L."], of: [.id(id)])  // refused: the write already failed
            }
        }
        #expect(throws: EntityError.self) {
            try store.writeNow { tx in
                do { try tx.set(["bio": .entity(EntityID())], of: [.id(id)]) } catch {}
            }
        }
        #expect(store.database.generation == generation)
        #expect(try await store.history(of: .id(id), key: "bio").count == 1)
        #expect(try await store.compactHistory(before: Date(timeIntervalSince1970: 2500)) == 0)
        #expect(try await store.records([.id(id)])[.id(id)]?["bio"] == .string(bio))
        #expect(try await store.records([.id(id)])[.id(id)]?["name"] == .string("Ada"))
    }

    /// Entities written in another layout of the entity trees are refused with a typed error
    /// (layout 1 stored no version, and its headers would decode into wrong labels silently;
    /// layout 2 kept the value index exact, and its builds would return layout 3's stale entries).
    @Test func entitiesOfAnotherLayoutAreRefused() async throws {
        let directory = TemporaryDirectory()
        let database = try Database(path: directory.path)
        let writer = try EntityStore(database: database)
        let ada = EntityReference.new("person", with: ["name": "Ada"])
        try await writer.resolve([ada])
        for (stored, found) in [(nil, UInt64(1)), (UInt64(4), UInt64(4))] as [(UInt64?, UInt64)] {
            try database.write { tx in
                let meta = try tx.tree(EntityLayout.meta)
                if let stored {
                    try tx.put(EntityLayout.versionName, withUnsafeBytes(of: stored.bigEndian) { Array($0) }, in: meta)
                } else {
                    try tx.delete(EntityLayout.versionName, in: meta)
                }
            }
            let fresh = try EntityStore(database: database)
            await #expect(throws: EntityError.unsupportedLayout(found: found, supported: EntityLayout.version)) {
                _ = try await fresh.entities(ofType: "person")
            }
            #expect(throws: EntityError.unsupportedLayout(found: found, supported: EntityLayout.version)) {
                try fresh.writeNow { tx in _ = try tx.resolve([.new("person")]) }
            }
        }
    }

    /// Layout 2 differs from 3 only in keeping the value index exact, which is a valid lazy index:
    /// such a store is read as it is and states layout 3 once a commit may leave stale entries.
    @Test func layoutTwoStoresAreReadAndUpgradedByTheirFirstChange() async throws {
        let directory = TemporaryDirectory()
        let database = try Database(path: directory.path)
        let writer = try EntityStore(database: database)
        let ada = EntityReference.new("person", with: ["name": "Ada"])
        try await writer.resolve([ada])
        func storedLayout() throws -> UInt64? {
            try database.read { tx in
                try tx.get(EntityLayout.versionName, in: try tx.tree(EntityLayout.meta)).map { bytes in
                    bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
                }
            }
        }
        try database.write { tx in
            try tx.put(EntityLayout.versionName, withUnsafeBytes(of: UInt64(2).bigEndian) { Array($0) }, in: try tx.tree(EntityLayout.meta))
        }
        let upgraded = try EntityStore(database: database)
        let people = try await upgraded.entities(ofType: "person")
        #expect(people.count == 1)
        #expect(try storedLayout() == 2) // reading changes nothing
        #expect(try await upgraded.entities(where: "name", equals: .string("Ada"), ofType: "person") == people)
        _ = try await upgraded.set(["name": .string("Ada L.")], of: [.id(people[0])])
        #expect(try await upgraded.entities(where: "name", equals: .string("Ada"), ofType: "person").isEmpty)
        #expect(try storedLayout() == EntityLayout.version)
    }

    /// A property match is remembered within a transaction only while its entity still matches:
    /// after the transaction renames it, the old name finds nothing (get-or-create makes a new one).
    @Test func aRenamedEntityNoLongerAnswersToItsOldNameInTheSameTransaction() async throws {
        let directory = TemporaryDirectory()
        let store = try EntityStore(database: try Database(path: directory.path))
        try await store.resolve([.new("person", with: ["name": "Ada"])])
        let ada = EntityReference.named("Ada", ofType: "person")
        try store.writeNow { tx in
            let first = try #require(try tx.existing([ada])[ada])
            _ = try tx.set(["name": .string("Augusta")], of: [.id(first)])
            #expect(try tx.existing([ada]).isEmpty)
            let created = try tx.resolve([ada.createIfMissing()])
            #expect(created.values.first != first)
            #expect(try tx.resolve([ada.createIfMissing()]).values.first == created.values.first)
        }
        #expect(try await store.entities(where: "name", equals: .string("Ada"), ofType: "person").count == 1)
    }
}
