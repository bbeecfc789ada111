import Glibc
import Synchronization

/// The reader table in the lock file: one 64-byte slot per live read snapshot.
///
///     0  Atomic u32 pid of the owning process (0 = free)
///     8  Atomic u64 snapshot: the generation being read (0 = the slot is idle)
///     16 Atomic u64 began at (ns since 1970, at the kernel's clock tick) of the current snapshot
///     24 Atomic u64 page count of the snapshot (how much file it can reach)
///
/// Ownership of a slot is an exclusive OFD lock on its first byte, held by the owning handle for as
/// long as it keeps the slot. A handle claims slots rarely (they are pooled in-process) and reuses
/// them for every read transaction, so beginning a read is a few atomic operations: no syscall,
/// no lock. A slot whose byte can be locked by someone else has no live owner and may be reaped;
/// pids alone are never trusted (they are reused).
///
/// Publication protocol (pairs with the writer's `oldestSnapshot()`):
///  reader: store slot.snapshot = g (seq_cst); reload generation (seq_cst); retry if it moved.
///  writer: store generation = g + 1 (seq_cst) ... later scan every slot (seq_cst).
/// Either the writer's scan sees the slot, or the reader's reload sees the newer generation, so a
/// writer never reuses a page that a registered snapshot can reach. Ending a snapshot stores 0
/// (release): the snapshot's reads are ordered before it, so the writer's scan that sees 0 comes
/// after them.
///
/// Sticky slots: a slot may stay owned and in use locally across many snapshots (`SnapshotReader`
/// keeps one, as LMDB binds a slot to a read transaction): each snapshot publishes its generation
/// and ends with `SlotFields.retire()`, which stores 0 but keeps the slot. Between snapshots the
/// slot reads as idle (0) to the writer, so it holds back no page; its slot lock stays held, so
/// the slot is reaped only if its process dies, exactly as a slot between two pooled transactions.
final class ReaderTable: @unchecked Sendable {
    private let lockFile: LockFile
    private let pid = UInt32(bitPattern: getpid())
    /// In-process state of each slot: 0 = not ours, 1 = ours and idle, 2 = ours and in use.
    private let local: UnsafeMutablePointer<Atomic<UInt8>>
    /// Serializes claiming and reaping (rare, slow paths that make syscalls).
    private let claimLock = Mutex<Void>(())
    private let hint = Atomic<Int>(0)

    private static let ownedIdle: UInt8 = 1
    private static let ownedBusy: UInt8 = 2

    init(lockFile: LockFile) {
        self.lockFile = lockFile
        local = .allocate(capacity: lockFile.slotCount)
        for index in 0..<lockFile.slotCount {
            (local + index).initialize(to: Atomic<UInt8>(0))
        }
    }

    deinit {
        local.deinitialize(count: lockFile.slotCount)
        local.deallocate()
    }

    var capacity: Int { lockFile.slotCount }

    private func offset(_ slot: Int) -> Int { LockFile.slotsOffset + slot * LockFile.slotSize }
    func pidField(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt32>> { lockFile.memory.atomic32(at: offset(slot)) }
    func snapshotField(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { lockFile.memory.atomic64(at: offset(slot) + 8) }
    func beganAtField(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { lockFile.memory.atomic64(at: offset(slot) + 16) }
    func pageCountField(_ slot: Int) -> UnsafeMutablePointer<Atomic<UInt64>> { lockFile.memory.atomic64(at: offset(slot) + 24) }

    /// Takes an idle slot this handle already owns, or claims a new one from the shared table.
    func acquireSlot() throws -> Int {
        let start = hint.load(ordering: .relaxed)
        let count = lockFile.slotCount
        for step in 0..<count {
            let slot = (start + step) % count
            if local[slot].load(ordering: .relaxed) == ReaderTable.ownedIdle,
               local[slot].compareExchange(expected: ReaderTable.ownedIdle, desired: ReaderTable.ownedBusy, ordering: .acquiring).exchanged {
                return slot
            }
        }
        return try claimNewSlot()
    }

    func releaseSlot(_ slot: Int) {
        snapshotField(slot).pointee.store(0, ordering: .releasing)
        local[slot].store(ReaderTable.ownedIdle, ordering: .releasing)
        hint.store(slot, ordering: .relaxed)
    }

    private func claimNewSlot() throws -> Int {
        try claimLock.withLock { _ in
            // First pass: slots that look free. Second pass: slots whose owner may have died.
            for pass in 0..<2 {
                for slot in 0..<lockFile.slotCount where local[slot].load(ordering: .relaxed) == 0 {
                    let looksFree = pidField(slot).pointee.load(ordering: .relaxed) == 0
                    if (pass == 0) != looksFree { continue }
                    if try lockFile.file.tryLock(offset: LockFile.slotLockByte(slot)) {
                        snapshotField(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                        pidField(slot).pointee.store(pid, ordering: .sequentiallyConsistent)
                        local[slot].store(ReaderTable.ownedBusy, ordering: .releasing)
                        return slot
                    }
                }
            }
            throw StrataError.readerTableFull(capacity: lockFile.slotCount)
        }
    }

    /// Publishes that `slot` reads `generation`; see the protocol in the type comment.
    func publish(slot: Int, generation: UInt64, pageCount: UInt64) {
        beganAtField(slot).pointee.store(Clock.coarseWallNanoseconds(), ordering: .relaxed)
        pageCountField(slot).pointee.store(pageCount, ordering: .relaxed)
        snapshotField(slot).pointee.store(generation, ordering: .sequentiallyConsistent)
    }

    /// The fields of an owned slot, resolved (and bounds-checked) once, for a reader that keeps
    /// the slot across snapshots (see "Sticky slots" above). Valid while this table lives.
    struct SlotFields {
        /// The store's published generation (`LockFile.generation`).
        let generation: UnsafeMutablePointer<Atomic<UInt64>>
        let snapshot: UnsafeMutablePointer<Atomic<UInt64>>
        let beganAt: UnsafeMutablePointer<Atomic<UInt64>>
        let pageCount: UnsafeMutablePointer<Atomic<UInt64>>

        /// Publishes that the slot reads `generation`: `publish(slot:generation:pageCount:)`
        /// without the page count (see `setPageCount`).
        @inline(__always)
        func publish(generation: UInt64) {
            beganAt.pointee.store(Clock.coarseWallNanoseconds(), ordering: .relaxed)
            snapshot.pointee.store(generation, ordering: .sequentiallyConsistent)
        }

        /// One round of the publication protocol (type comment): publishes the generation now
        /// published and returns it if it is still the published one after; nil if it moved (the
        /// slot then shows a generation that may not be protected: publish again).
        @inline(__always)
        func publishCurrent() -> UInt64? {
            let current = generation.pointee.load(ordering: .acquiring)
            publish(generation: current)
            return generation.pointee.load(ordering: .sequentiallyConsistent) == current ? current : nil
        }

        @inline(__always)
        func setPageCount(_ count: UInt64) { pageCount.pointee.store(count, ordering: .relaxed) }

        /// Ends the snapshot, keeping the slot (release: the snapshot's reads come before it).
        @inline(__always)
        func retire() { snapshot.pointee.store(0, ordering: .releasing) }
    }

    func fields(of slot: Int) -> SlotFields {
        precondition(isOwnedLocally(slot), "slot \(slot) is not owned by this handle")
        return SlotFields(generation: lockFile.generation, snapshot: snapshotField(slot), beganAt: beganAtField(slot), pageCount: pageCountField(slot))
    }

    /// The oldest generation any registered reader may still be reading, or nil if none.
    /// Every write transaction begins with this scan: the table's bounds are checked once (its
    /// last slot's fields), not per field as `snapshotField` does (~3k instructions a scan).
    func oldestSnapshot() -> UInt64? {
        let count = lockFile.slotCount
        guard count > 0 else { return nil }
        _ = snapshotField(count - 1)
        _ = pidField(count - 1)
        let snapshots = UnsafeMutableRawPointer(snapshotField(0))
        let pids = UnsafeMutableRawPointer(pidField(0))
        var oldest: UInt64?
        for slot in 0..<count {
            let offset = slot * LockFile.slotSize
            let snapshot = (snapshots + offset).assumingMemoryBound(to: Atomic<UInt64>.self).pointee.load(ordering: .sequentiallyConsistent)
            if snapshot != 0, (pids + offset).assumingMemoryBound(to: Atomic<UInt32>.self).pointee.load(ordering: .relaxed) != 0 {
                oldest = min(oldest ?? snapshot, snapshot)
            }
        }
        return oldest
    }

    /// Frees slots whose owners died (their slot lock is free). Returns how many were reaped.
    @discardableResult
    func reapDeadReaders() -> Int {
        claimLock.withLock { _ in
            var reaped = 0
            for slot in 0..<lockFile.slotCount where local[slot].load(ordering: .relaxed) == 0 {
                guard pidField(slot).pointee.load(ordering: .relaxed) != 0 else { continue }
                // Our own OFD would "succeed" on our own slots; those are excluded above.
                guard (try? lockFile.file.tryLock(offset: LockFile.slotLockByte(slot))) == true else { continue }
                snapshotField(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                pidField(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                lockFile.file.unlock(offset: LockFile.slotLockByte(slot))
                reaped += 1
            }
            return reaped
        }
    }

    /// Gives owned slots back to the table: only idle ones (on close, while transactions may still
    /// be running), or all of them (when the handle is destroyed and none can be).
    func releaseOwnedSlots(onlyIdle: Bool) {
        claimLock.withLock { _ in
            for slot in 0..<lockFile.slotCount where local[slot].load(ordering: .relaxed) != 0 {
                if onlyIdle {
                    guard local[slot].compareExchange(expected: ReaderTable.ownedIdle, desired: 0, ordering: .acquiringAndReleasing).exchanged else { continue }
                }
                snapshotField(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                pidField(slot).pointee.store(0, ordering: .sequentiallyConsistent)
                lockFile.file.unlock(offset: LockFile.slotLockByte(slot))
                local[slot].store(0, ordering: .releasing)
            }
        }
    }

    func isOwnedLocally(_ slot: Int) -> Bool { local[slot].load(ordering: .relaxed) != 0 }

    /// `releaseSlot`, but only while this handle still owns `slot`: for a holder that may outlive
    /// its handle (a `SnapshotReader` kept alive by an escaped `ReadSnapshot`). Once the handle
    /// gave its slots back (`releaseOwnedSlots`), the slot may be another reader's, and clearing its
    /// snapshot would let the writer reuse that reader's pages. Under `claimLock`, which
    /// `releaseOwnedSlots` holds while it gives slots back, so the check and the store are not
    /// separated by a hand-over.
    func releaseSlotIfOwnedLocally(_ slot: Int) {
        claimLock.withLock { _ in
            guard isOwnedLocally(slot) else { return }
            releaseSlot(slot)
        }
    }

    /// A consistent-enough picture of the table for reporting (values may move while it is read):
    /// every claimed slot as of the committed generation `current` and the wall clock `now`, its
    /// liveness judged by its slot lock. Pinned pages are left 0 (`Database.readerReport` counts them).
    func entries(current: UInt64, now: UInt64) throws -> [ReaderInfo] {
        try (0..<lockFile.slotCount).compactMap { slot in
            let pid = pidField(slot).pointee.load(ordering: .acquiring)
            guard pid != 0 else { return nil }
            let snapshot = snapshotField(slot).pointee.load(ordering: .acquiring)
            let beganAt = beganAtField(slot).pointee.load(ordering: .relaxed)
            let busy = snapshot != 0
            let ownedByThisHandle = isOwnedLocally(slot)
            let lockedByOwner = try lockFile.file.isLockedByOthers(offset: LockFile.slotLockByte(slot))
            return ReaderInfo(slot: slot, pid: Int32(bitPattern: pid), snapshot: snapshot,
                              lag: busy && current > snapshot ? current - snapshot : 0,
                              age: busy && now > beganAt ? Double(now - beganAt) / 1e9 : 0,
                              pinnedPages: 0, isAlive: ownedByThisHandle || lockedByOwner, isThisHandle: ownedByThisHandle)
        }
    }
}
