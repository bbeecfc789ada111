import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// Stored entity values that no longer decode (bit rot with `verifyChecksums` off, a foreign
/// writer) are `EntityError.corrupt`, the entity store's own error for damage, on every read and
/// write path: not the ordered-key coder's `OrderedKeyError` from deep inside.
@Suite struct EntityDamagedValueTests {
    /// Cuts the last three bytes off every stored body (history entry and header) that ends with
    /// the encoding of `value`: its 8 bytes no longer fit.
    private func truncateStored(_ value: EntityValue, in database: Database) throws -> Int {
        let encoded = value.orderedBytes
        return try database.write { tx in
            let tree = try tx.tree(EntityLayout.entries)
            var damaged: [([UInt8], [UInt8])] = []
            try tx.scan(tree) { key, body in
                let bytes = body.bytes
                if bytes.count >= encoded.count && Array(bytes.suffix(encoded.count)) == encoded {
                    damaged.append((key.bytes, Array(bytes.dropLast(3))))
                }
                return true
            }
            for (key, body) in damaged { try tx.put(key, body, in: tree) }
            return damaged.count
        }
    }

    @Test func aTruncatedDoubleIsCorruptOnReadsHistoryAndWrites() async throws {
        let directory = TemporaryDirectory()
        let store = try EntityStore(at: directory.path)
        let ada = EntityReference.new("person", with: ["name": "Ada", "score": .double(1.5)])
        let id = try #require(try await store.resolve([ada])[ada])
        #expect(try truncateStored(.double(1.5), in: store.database) >= 1)

        func isCorrupt(_ error: any Error) -> Bool {
            if case EntityError.corrupt = error { return true }
            return false
        }
        await #expect(performing: { _ = try await store.history(of: .id(id), key: "score") }, throws: isCorrupt)
        await #expect(performing: { _ = try await store.records([.id(id)]) }, throws: isCorrupt)
        await #expect(performing: { _ = try await store.set(["score": .double(2.5)], of: [.id(id)]) }, throws: isCorrupt)
        // Other entities' reads are unaffected.
        let bob = EntityReference.new("person", with: ["name": "Bob"])
        let bobID = try #require(try await store.resolve([bob])[bob])
        #expect(try await store.records([.id(bobID)])[.id(bobID)]?["name"] == .string("Bob"))
    }
}
