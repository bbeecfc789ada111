import Synchronization

/// Idle read objects of one handle, kept for reuse: what LMDB offers as
/// `mdb_txn_reset`/`mdb_txn_renew`, done for the caller. Two pools per handle: ended
/// `ReadTransaction`s (for `Database.read`/`beginRead`) and `SnapshotReader`s (for
/// `withSnapshot`). Beginning a read then costs a registration instead of object allocations,
/// an array and their deallocation.
///
/// Invariants that make reuse safe:
/// - Only an object that has ended and that nobody else references is parked
///   (`Database.read` checks `isKnownUniquelyReferenced`; a `SnapshotReader` is referenced only by
///   `ReadSnapshot`s whose lease has ended); a read transaction is handed out only after renewing
///   it (new serial, so tree handles of its earlier life are refused).
/// - A parked object holds no reference to its `Database` (the pool lives in the database; a
///   strong reference back would keep the handle alive forever). A parked read transaction holds
///   no reader slot; a parked `SnapshotReader` keeps its slot idle (snapshot 0, see `ReaderTable`).
/// - Cursors made in an earlier life hold its `PageAccess`, whose lease moved on when that life
///   ended: they refuse to move (see `PageAccess.lease`).
///
/// The slots are atomics holding retained object pointers: taking is a compare-exchange, parking a
/// compare-exchange, so threads hand objects over without a lock. Unsafe code stays in here.
///
/// Reserved slots (`takeReserving(slot:)`): the slot an object was taken from stays `reserved` while the
/// object is out, so nobody else parks there or takes from it, and the object goes back with a
/// plain store instead of a compare-exchange (one locked read-modify-write less per per-call
/// snapshot, about 3.5 ns on this VM). Its taker either parks it there or cancels the reservation.
final class IdlePool<Object: AnyObject>: @unchecked Sendable {
    /// A few per handle: enough for the threads that read at the same moment; beyond that, an
    /// object that finds no free slot is simply deallocated.
    static var capacity: Int { 8 }
    private let slots: UnsafeMutablePointer<Atomic<UInt>>
    /// A slot's value while the object taken from it by `takeReserving(slot:)` is out (0 is an empty
    /// slot; an object pointer is never 1).
    private static var reserved: UInt { 1 }

    init() {
        slots = .allocate(capacity: IdlePool.capacity)
        for index in 0..<IdlePool.capacity { (slots + index).initialize(to: Atomic<UInt>(0)) }
    }

    deinit {
        drain()
        slots.deinitialize(count: IdlePool.capacity)
        slots.deallocate()
    }

    /// An idle object to renew, or nil if none is parked.
    func take() -> Object? {
        var slot: Int?
        return take(leaving: 0, slot: &slot)
    }

    /// `take()`, leaving the slot reserved for the object's return (`park(_:returningTo:)`,
    /// `cancelReservation(_:)`); `slot` is set to it (nil when nothing was taken).
    func takeReserving(slot: inout Int?) -> Object? {
        take(leaving: IdlePool.reserved, slot: &slot)
    }

    @inline(__always)
    private func take(leaving mark: UInt, slot: inout Int?) -> Object? {
        for index in 0..<IdlePool.capacity {
            let bits = slots[index].load(ordering: .relaxed)
            guard bits > IdlePool.reserved,
                  slots[index].compareExchange(expected: bits, desired: mark, ordering: .acquiring).exchanged else { continue }
            slot = index
            return Unmanaged<Object>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeRetainedValue()
        }
        return nil
    }

    /// Parks an object taken by `takeReserving(slot:)` in its reserved `slot` (a plain store: only
    /// its taker writes a reserved slot), or, with no reservation, as `park(_:)` does.
    func park(_ object: consuming Object, returningTo slot: Int?) {
        guard let slot else { return park(object) }
        // Debug builds only (release builds keep the plain store): a slot that is not reserved
        // holds a parked object or lets others park there, and the store would overwrite either.
        assert(slots[slot].load(ordering: .relaxed) == IdlePool.reserved, "IdlePool: parked in slot \(slot), which is not reserved")
        slots[slot].store(UInt(bitPattern: Unmanaged.passRetained(consume object).toOpaque()), ordering: .releasing)
    }

    /// Gives up the reservation of `slot` without parking its object (which is then deallocated
    /// when its last reference goes, as an object that finds the pool full is).
    func cancelReservation(_ slot: Int) {
        assert(slots[slot].load(ordering: .relaxed) == IdlePool.reserved, "IdlePool: cancelled slot \(slot), which is not reserved")
        slots[slot].store(0, ordering: .releasing)
    }

    /// Keeps an ended, unreferenced object for the next `take()`, if a slot is free.
    func park(_ object: consuming Object) {
        // The caller's reference becomes the pool's (no retain and release when it was the last use).
        let bits = UInt(bitPattern: Unmanaged.passRetained(consume object).toOpaque())
        for index in 0..<IdlePool.capacity where slots[index].load(ordering: .relaxed) == 0 {
            if slots[index].compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged { return }
        }
        Unmanaged<Object>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release()
    }

    /// Deallocates every parked object (on close: they keep the mapping alive).
    func drain() {
        while take() != nil {}
    }

    // For tests: what the slots hold now (racy by nature; meaningful when the pool is quiet).

    /// The slots reserved now: taken by `takeReserving(slot:)`, neither parked in nor cancelled.
    var reservedSlots: [Int] {
        (0..<IdlePool.capacity).filter { slots[$0].load(ordering: .acquiring) == IdlePool.reserved }
    }

    /// The number of objects parked now.
    var parkedCount: Int {
        (0..<IdlePool.capacity).count { slots[$0].load(ordering: .acquiring) > IdlePool.reserved }
    }
}
