import Glibc

extension Database {
    /// Registers a read snapshot of the newest generation (see `SnapshotRegistration`) and
    /// returns what it holds with the generation's meta. Pair with `releaseSnapshot`.
    func claimSnapshot() throws -> (SnapshotClaim, MetaPage) {
        switch registration {
        case .readerTable:
            let slot = try claimSlot()
            do {
                return (.slot(slot), try snapshotMeta(slot: slot))
            } catch {
                readers.releaseSlot(slot)
                throw error
            }
        case .pins(let pins):
            let meta = try snapshotMeta(register: { try pins.pin($0) }, withdraw: { pins.unpin($0) })
            return (.pin(meta.transactionID), meta)
        case .detached(let meta):
            return (.detached, meta)
        }
    }

    /// A reader slot of this handle for one snapshot or for a `SnapshotReader`. A full table is
    /// first relieved of the slots idle `SnapshotReader`s keep, before it is reported full.
    func claimSlot() throws -> Int {
        do {
            return try readers.acquireSlot()
        } catch StrataError.readerTableFull {
            idleSnapshots.drain()
            return try readers.acquireSlot()
        }
    }

    func releaseSnapshot(_ claim: SnapshotClaim) {
        switch (claim, registration) {
        case (.slot(let slot), _): readers.releaseSlot(slot)
        case (.pin(let generation), .pins(let pins)): pins.unpin(generation)
        default: break
        }
    }

    /// The newest page transaction a snapshot of `meta` may meet: a snapshot outside the reader
    /// table checks every page it reads against it (a page rewritten by a later commit is a typed
    /// error; a page rewritten while it is being read is not caught, so this detects a missing pin
    /// rather than replacing one); one in the table is protected by it and skips the check.
    func newestReadableTransaction(_ claim: SnapshotClaim, meta: MetaPage) -> UInt64 {
        if case .slot = claim { return .max }
        return meta.transactionID
    }

    /// The oldest generation below `limit` that a reader (table slot or pin) may still read.
    func oldestRegisteredSnapshot(below limit: UInt64) throws -> UInt64? {
        let inTable = readers.oldestSnapshot()
        guard case .detached = registration else {
            let pinned = try SnapshotPins.oldestPin(in: lockFile.file, below: min(limit, inTable ?? limit))
            return [inTable, pinned].compactMap { $0 }.min()
        }
        return nil
    }
}
