import Foundation
import Testing
@testable import StrataCore

/// `IdlePool` reservations: the slot a per-call snapshot's reader came from stays reserved while
/// the reader is out, and the reader goes back there with a plain store.
@Suite struct IdlePoolReservationTests {
    final class Item {}

    @Test func aReservedSlotIsNeitherTakenNorParkedInByOthers() {
        let pool = IdlePool<Item>()
        let first = Item()
        pool.park(first)
        var slot: Int?
        let taken = pool.takeReserving(slot: &slot)
        #expect(taken === first)
        let reserved = slot
        // While it is out, nothing else can be taken, and others park elsewhere.
        #expect(pool.take() == nil)
        let second = Item()
        pool.park(second)
        var otherSlot: Int?
        #expect(pool.takeReserving(slot: &otherSlot) === second)
        #expect(reserved != nil && otherSlot != nil && otherSlot != reserved)
        // Each goes back to its own slot; both can be taken again.
        pool.park(taken!, returningTo: reserved)
        pool.park(second, returningTo: otherSlot)
        let again = [pool.take(), pool.take()]
        #expect(again.contains { $0 === first } && again.contains { $0 === second })
        #expect(pool.take() == nil)
    }

    @Test func aCancelledReservationFreesTheSlotAndDrainSkipsReservations() {
        let pool = IdlePool<Item>()
        for _ in 0..<IdlePool<Item>.capacity { pool.park(Item()) }
        var slot: Int?
        weak var out: Item?
        do {
            let item = pool.takeReserving(slot: &slot)
            out = item
            #expect(item != nil)
            pool.drain() // leaves the reserved slot alone
            #expect(pool.take() == nil)
            // The pool is otherwise empty but the reserved slot: a new item parks elsewhere.
            pool.park(Item())
            pool.cancelReservation(slot!)
        }
        #expect(out == nil) // not parked: deallocated with its last reference
        // The cancelled slot is free again: `capacity - 1` more items fit beside the one parked.
        for _ in 0..<(IdlePool<Item>.capacity - 1) { pool.park(Item()) }
        var taken = 0
        while pool.take() != nil { taken += 1 }
        #expect(taken == IdlePool<Item>.capacity)
    }

    @Test func snapshotsReuseTheirReaderAcrossCallsAndAfterAFailedBody() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "v", in: try tx.createTree("t")) }
        var readers = Set<ObjectIdentifier>()
        struct BodyFailure: Error {}
        for round in 0..<10 {
            if round % 3 == 0 {
                #expect(throws: BodyFailure.self) { try db.withSnapshot { _ in throw BodyFailure() } }
            }
            try db.withSnapshot { (snapshot: ReadSnapshot) throws in
                readers.insert(ObjectIdentifier(snapshot.reader))
                #expect(try snapshot.get("k", inTree: "t").map { Array($0) } == Array("v".utf8))
            }
        }
        // One thread, one reader: it always came back to its reserved slot.
        #expect(readers.count == 1)
        db.close()
        #expect(throws: StrataError.self) { try db.withSnapshot { _ in } }
    }
}
