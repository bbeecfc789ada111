import Foundation
import Synchronization
import Testing
@testable import StrataCore
import StrataTestFixtures

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
        // The first call's reader, held weakly: a freed reader reads as nil, so `===` cannot be
        // fooled by a new reader at a freed one's address, and holding it does not keep it alive.
        weak var first: SnapshotReader?
        struct BodyFailure: Error {}
        for round in 0..<10 {
            if round % 3 == 1 {
                #expect(throws: BodyFailure.self) { try db.withSnapshot { _ in throw BodyFailure() } }
            }
            try db.withSnapshot { (snapshot: ReadSnapshot) throws in
                if round == 0 {
                    // A new reader: no reservation; it parks in any free slot when the call ends.
                    first = snapshot.reader
                    #expect(snapshot.reader.poolSlot == nil)
                    #expect(db.idleSnapshots.reservedSlots.isEmpty)
                } else {
                    // The same reader, taken from its slot, which stays reserved while it is out.
                    #expect(first != nil && snapshot.reader === first)
                    let slot = try #require(snapshot.reader.poolSlot)
                    #expect(db.idleSnapshots.reservedSlots == [slot])
                    #expect(db.idleSnapshots.parkedCount == 0)
                    if round == 5 {
                        // A nested call finds nothing idle: a new reader, which parks elsewhere.
                        try db.withSnapshot { (inner: ReadSnapshot) throws in
                            #expect(inner.reader !== snapshot.reader && inner.reader.poolSlot == nil)
                        }
                        #expect(db.idleSnapshots.reservedSlots == [slot])
                        #expect(db.idleSnapshots.parkedCount == 1)
                        // Take the nested reader out again, so later rounds see one reader only.
                        db.idleSnapshots.drain()
                    }
                }
                #expect(try snapshot.get("k", inTree: "t").map { Array($0) } == Array("v".utf8))
            }
            // Back in its slot, no reservation left.
            #expect(db.idleSnapshots.reservedSlots.isEmpty)
            #expect(db.idleSnapshots.parkedCount == 1)
        }
        #expect(first != nil)
        db.close()
        #expect(first == nil) // close drained the pool: the reader was released
        #expect(throws: StrataError.self) { try db.withSnapshot { _ in } }
    }

    @Test func closingInsideASnapshotCancelsItsReservationAndReleasesTheReader() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "v", in: try tx.createTree("t")) }
        try db.withSnapshot { _ in } // parks a reader: the next call takes it and reserves its slot
        weak var reader: SnapshotReader?
        try db.withSnapshot { (snapshot: ReadSnapshot) throws in
            reader = snapshot.reader
            let slot = try #require(snapshot.reader.poolSlot)
            #expect(db.idleSnapshots.reservedSlots == [slot])
            db.close()
            // Close drained the pool around the reservation, which is still the reader's.
            #expect(db.idleSnapshots.reservedSlots == [slot])
            #expect(db.idleSnapshots.parkedCount == 0)
            #expect(try snapshot.get("k", inTree: "t").map { Array($0) } == Array("v".utf8))
        }
        // The call ended on a closed handle: the reservation was cancelled, not parked in, and
        // the reader (with its reader-table slot) was released with its last reference.
        #expect(db.idleSnapshots.reservedSlots.isEmpty)
        #expect(db.idleSnapshots.parkedCount == 0)
        #expect(reader == nil)
    }

    /// An object whose takers mark it: taking one already marked means two takers hold it.
    final class Marked: @unchecked Sendable {
        let taken = Atomic<Bool>(false)
    }

    final class Violations: @unchecked Sendable {
        let count = Atomic<Int>(0)
    }

    @Test func concurrentTakersNeverHoldTheSameObject() {
        let seed = testSeed("idlePoolConcurrentTakers")
        let pool = IdlePool<Marked>()
        let violations = Violations()
        let threads = 4, operations = 200_000
        let ready = DispatchGroup(), start = DispatchSemaphore(value: 0), done = DispatchGroup()
        for thread in 0..<threads {
            ready.enter()
            done.enter()
            let worker = Thread {
                defer { done.leave() }
                // All threads start together, so their operations overlap.
                ready.leave()
                start.wait()
                var generator = SeededGenerator(seed: seed &+ UInt64(thread))
                var held: [(object: Marked, slot: Int?)] = []
                func hold(_ object: Marked?, slot: Int?) {
                    guard let object else { return }
                    if !object.taken.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
                        violations.count.add(1, ordering: .relaxed)
                    }
                    held.append((object, slot))
                }
                for _ in 0..<operations {
                    switch UInt8.random(in: 0..<6, using: &generator) {
                    case 0:
                        hold(pool.take(), slot: nil)
                    case 1:
                        var slot: Int?
                        let object = pool.takeReserving(slot: &slot)
                        hold(object, slot: slot)
                    case 2:
                        pool.park(Marked())
                    case 3, 4:
                        guard !held.isEmpty else { continue }
                        let (object, slot) = held.removeLast()
                        object.taken.store(false, ordering: .releasing)
                        pool.park(object, returningTo: slot)
                    default:
                        guard !held.isEmpty else { continue }
                        let (object, slot) = held.removeLast()
                        object.taken.store(false, ordering: .releasing)
                        if let slot { pool.cancelReservation(slot) }
                    }
                }
                for (object, slot) in held {
                    object.taken.store(false, ordering: .releasing)
                    pool.park(object, returningTo: slot)
                }
            }
            worker.start()
        }
        ready.wait()
        for _ in 0..<threads { start.signal() }
        done.wait()
        #expect(violations.count.load(ordering: .relaxed) == 0)
        // Every reservation was parked in or cancelled.
        #expect(pool.reservedSlots.isEmpty)
        pool.drain()
        #expect(pool.parkedCount == 0 && pool.reservedSlots.isEmpty)
    }
}
