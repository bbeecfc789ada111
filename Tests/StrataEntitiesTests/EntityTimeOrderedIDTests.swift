import Foundation
import Glibc
import Strata
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// Entities the store creates without an identifier from the caller get time-ordered ones
/// (`EntityID.timeOrdered()`, UUID version 7), so that what one transaction creates is stored
/// together instead of on a random page per entity.
@Suite struct EntityTimeOrderedIDTests {
    private static func unixMilliseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }

    /// The first 48 bits, the version nibble and the variant bits of `id`.
    private static func fields(_ id: EntityID) -> (milliseconds: UInt64, version: UInt8, variant: UInt8) {
        withUnsafeBytes(of: id.uuid.uuid) { raw in
            let milliseconds = raw[0..<6].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            return (milliseconds, raw[6] >> 4, raw[8] >> 6)
        }
    }

    @Test func anIdentifierIsVersion7WithTheTimeInFront() {
        let before = Self.unixMilliseconds()
        let id = EntityID.timeOrdered()
        let after = Self.unixMilliseconds()
        let (milliseconds, version, variant) = Self.fields(id)
        #expect(version == 7)
        #expect(variant == 0b10)
        #expect(milliseconds >= before && milliseconds <= after)
        // The rest is random: two made at once differ.
        #expect(EntityID.timeOrdered() != EntityID.timeOrdered())
    }

    @Test func laterIdentifiersSortAfterEarlierOnes() throws {
        let first = EntityID.timeOrdered()
        let start = Self.unixMilliseconds()
        while Self.unixMilliseconds() < start + 2 { usleep(500) }
        let second = EntityID.timeOrdered()
        #expect(first < second)
        #expect(first.uuid.uuidString < second.uuid.uuidString)
    }

    @Test func entitiesTheStoreCreatesGetTimeOrderedIdentifiers() throws {
        let store = try EntityStore.inMemory()
        let named = EntityReference.named("Ada", ofType: "person").createIfMissing()
        let fresh = EntityReference.new("person", with: ["name": "Grace"])
        let byCaller = EntityReference.id(EntityID()).createIfMissing(as: "person")
        let ids = try store.writeNow { tx in try tx.resolve([named, fresh, byCaller]) }
        #expect(Self.fields(try #require(ids[named])).version == 7)
        #expect(Self.fields(try #require(ids[fresh])).version == 7)
        // An identifier the caller chose is kept as it is.
        #expect(Self.fields(try #require(ids[byCaller])).version == 4)
        let found = try store.readNow { tx in try tx.existing([.named("Ada", ofType: "person"), .named("Grace", ofType: "person")]) }
        #expect(found.count == 2)
    }
}
