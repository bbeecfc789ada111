import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// A NaN datestamp is refused before anything is written, by every write that takes one and by
/// an import (found in review: it was stored, and as every comparison with NaN is false, no
/// later entry of the property ever became current and imports stopped being idempotent).
/// Infinite datestamps are ordered and stay allowed.
@Suite struct EntityDatestampTests {
    private let nan = Date(timeIntervalSinceReferenceDate: .nan)

    private func isInvalidDatestamp(_ error: any Error) -> Bool {
        if case EntityError.invalidDatestamp = error { return true }
        return false
    }

    @Test func aNaNDatestampIsRefusedByEveryWrite() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let ref = EntityReference.new("t", with: ["p": 0])
        let id = try #require(try await store.resolve([ref])[ref])
        let entity = EntityReference.id(id)
        await #expect { try await store.set(["p": 1], of: [entity], at: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.set([entity: ["p": 1]], at: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.set("p", to: 1, of: entity, at: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.relate([entity], key: "r", to: entity, at: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.remove(["p"], of: [entity], at: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.delete([entity], at: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.write { try $0.add(["p": [PropertyEntry(1, datestamp: nan)]], to: entity) } } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.write(at: nan) { try $0.set(["p": 1], of: [entity]) } } throws: { isInvalidDatestamp($0) }
        try await store.set(["p": 2], of: [entity])
        #expect(try await store.records([entity])[entity]?["p"] == .int(2))
        #expect(try await store.history(of: entity, key: "p").count == 2)
        // Infinite datestamps are ordered.
        try await store.set(["p": 3], of: [entity], at: .distantFuture)
        try await store.set(["p": 4], of: [entity], at: Date(timeIntervalSinceReferenceDate: .infinity))
        #expect(try await store.records([entity])[entity]?["p"] == .int(4))
    }

    /// An as-of read and a compaction given NaN answered as if it were a date (no comparison
    /// with NaN is true: compaction dropped nothing and said 0; an as-of read returned whatever
    /// NaN's key encoding sorts next to): both refuse it like the writes.
    @Test func aNaNDatestampIsRefusedByAsOfReadsAndCompaction() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let ref = EntityReference.new("t", with: ["p": 0])
        let id = try #require(try await store.resolve([ref])[ref])
        let entity = EntityReference.id(id)
        try await store.set(["p": 1], of: [entity], at: Date(timeIntervalSinceReferenceDate: 10))
        await #expect { try await store.value(of: entity, key: "p", asOf: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.read { try $0.entry(of: entity, key: "p", asOf: nan) } } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.compactHistory(before: nan) } throws: { isInvalidDatestamp($0) }
        await #expect { try await store.write { try $0.compactHistory(before: nan) } } throws: { isInvalidDatestamp($0) }
        // Nothing was dropped, and ordinary dates still work.
        #expect(try await store.history(of: entity, key: "p").count == 2)
        #expect(try await store.value(of: entity, key: "p", asOf: Date(timeIntervalSinceReferenceDate: 10)) == .int(1))
        #expect(try await store.compactHistory(before: .distantFuture) == 1)
    }

    @Test func aNaNDatestampInADocumentIsInvalid() async throws {
        for (created, modified, datestamp) in [("\"nan\"", "0", "0"), ("0", "\"nan\"", "0"), ("0", "0", "\"nan\"")] {
            let store = try EntityStore<ReadWrite>.inMemory()
            let doc = #"{"format":"strata-entities","version":1,"mode":"full","entities":[{"id":"\#(UUID())","type":"t","created":\#(created),"modified":\#(modified),"properties":{"p":[{"value":{"double":"nan"},"datestamp":\#(datestamp)}]}}]}"#
            await expectInvalidInterchange(store, Data(doc.utf8))
            #expect(try await store.entities(ofType: "t").isEmpty)
        }
    }
}
