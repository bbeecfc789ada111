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
/// The slots are atomics holding retained object pointers: taking is an exchange, parking a
/// compare-exchange, so threads hand objects over without a lock. Unsafe code stays in here.
final class IdlePool<Object: AnyObject>: @unchecked Sendable {
    /// A few per handle: enough for the threads that read at the same moment; beyond that, an
    /// object that finds no free slot is simply deallocated.
    static var capacity: Int { 8 }
    private let slots: UnsafeMutablePointer<Atomic<UInt>>

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
        for index in 0..<IdlePool.capacity where slots[index].load(ordering: .relaxed) != 0 {
            let bits = slots[index].exchange(0, ordering: .acquiring)
            if bits != 0 { return Unmanaged<Object>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeRetainedValue() }
        }
        return nil
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
}
