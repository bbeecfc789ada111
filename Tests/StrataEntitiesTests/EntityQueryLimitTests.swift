import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// A query with a limit reads no further into the `values` index than it needs: an equality
/// query (get-or-create by a property) stops at its limit instead of reading every entity with
/// that value. Observed through a damaged index entry placed after the matches: a query that
/// stops in time never meets it; one without a limit reports it.
@Suite struct EntityQueryLimitTests {
    @Test func anEqualityQueryStopsAtItsLimit() async throws {
        let directory = TemporaryDirectory()
        let store = try EntityStore(at: directory.path)
        let reds = (0..<5).map { EntityReference.new("car", with: ["color": "red", "n": .int($0)]) }
        let ids = try await store.resolve(reds)
        // A forged entry after the last red one: same name and value, a later sequence, a value
        // of 3 bytes where the index holds 16 or 17.
        try store.database.write { tx in
            let values = try tx.tree(EntityLayout.values)
            var last: [UInt8]?
            try tx.scan(values) { key, _ in
                if key.starts(with: Array("color".utf8)) { last = key.bytes }
                return true
            }
            var forged = try #require(last)
            forged[forged.count - 1] &+= 100
            try tx.put(forged, [1, 2, 3], in: values)
        }
        let two = try await store.entities(where: "color", equals: "red", limit: 2)
        #expect(two == [ids[reds[0]]!, ids[reds[1]]!])
        await #expect(performing: { _ = try await store.entities(where: "color", equals: "red") }, throws: { error in
            if case EntityError.corrupt = error { return true }
            return false
        })
    }
}
