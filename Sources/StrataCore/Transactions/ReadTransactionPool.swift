import Synchronization

/// Idle read transactions of one handle, kept for reuse: what LMDB offers as
/// `mdb_txn_reset`/`mdb_txn_renew`, done for the caller. Beginning a read then costs a slot claim
/// and a meta look-up instead of two object allocations, an array and their deallocation.
///
/// Invariants that make reuse safe:
/// - Only a transaction that has ended and that nobody else references is parked
///   (`Database.read` checks `isKnownUniquelyReferenced`); `beginRead()` hands out a parked one
///   only after renewing it (new serial, so tree handles of its earlier life are refused).
/// - A parked transaction holds no reader slot and no reference to its `Database` (the pool
///   lives in the database; a strong reference back would keep the handle alive forever).
/// - Cursors made in an earlier life hold its `PageAccess`, whose lease moved on when that life
///   ended: they refuse to move (see `PageAccess.lease`).
///
/// The slots are atomics holding retained object pointers: taking is an exchange, parking a
/// compare-exchange, so threads hand transactions over without a lock. Unsafe code stays in here.
final class ReadTransactionPool: @unchecked Sendable {
    /// A few per handle: enough for the threads that read at the same moment; beyond that, a
    /// transaction that finds no free slot is simply deallocated.
    static let capacity = 8
    private let slots: UnsafeMutablePointer<Atomic<UInt>>

    init() {
        slots = .allocate(capacity: ReadTransactionPool.capacity)
        for index in 0..<ReadTransactionPool.capacity { (slots + index).initialize(to: Atomic<UInt>(0)) }
    }

    deinit {
        drain()
        slots.deinitialize(count: ReadTransactionPool.capacity)
        slots.deallocate()
    }

    /// An idle transaction to renew, or nil if none is parked.
    func take() -> ReadTransaction? {
        for index in 0..<ReadTransactionPool.capacity where slots[index].load(ordering: .relaxed) != 0 {
            let bits = slots[index].exchange(0, ordering: .acquiring)
            if bits != 0 { return Unmanaged<ReadTransaction>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeRetainedValue() }
        }
        return nil
    }

    /// Keeps an ended, unreferenced transaction for the next `take()`, if a slot is free.
    func park(_ transaction: ReadTransaction) {
        let bits = UInt(bitPattern: Unmanaged.passRetained(transaction).toOpaque())
        for index in 0..<ReadTransactionPool.capacity where slots[index].load(ordering: .relaxed) == 0 {
            if slots[index].compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged { return }
        }
        Unmanaged<ReadTransaction>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release()
    }

    /// Deallocates every parked transaction (on close: they keep the mapping alive).
    func drain() {
        while take() != nil {}
    }
}
