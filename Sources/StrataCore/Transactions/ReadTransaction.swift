/// A read-only view of one committed generation.
///
/// Beginning one claims a reader slot (pooled per handle, so usually no syscall), publishes the
/// generation it reads, and copies that generation's meta; after that every read is a plain load from
/// the shared mapping. The writer never reuses a page this snapshot can reach until `end()` (or
/// deinit) gives the slot back, so values are handed out without copying. A handle that may not
/// write the lock file pins the generation with a read lock instead (see `SnapshotPins`).
public final class ReadTransaction: Transaction {
    private let claim: SnapshotClaim
    /// When the snapshot's generation was committed (ns since 1970).
    public let commitTime: UInt64
    /// The snapshot's free-page tree (for verification and statistics).
    let freeTree: TreeRecord
    /// The snapshot's high-water mark.
    public var pageCount: UInt64 { access.committedPageCount }

    init(database: Database, access: PageAccess, meta: MetaPage, claim: SnapshotClaim) {
        self.claim = claim
        commitTime = meta.commitTime
        freeTree = meta.freeTree
        super.init(database: database, access: access, catalog: meta.catalog, generation: meta.transactionID)
    }

    deinit { if isActive { database.releaseSnapshot(claim) } }

    /// Ends the transaction and releases its snapshot. Values it handed out must not be used after.
    public func end() {
        guard isActive else { return }
        isActive = false
        access.modificationCount += 1 // invalidates cursors: the snapshot's pages may be reused
        database.releaseSnapshot(claim)
    }
}
