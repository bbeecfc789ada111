/// A read-only view of one committed generation.
///
/// Beginning one claims a reader slot (pooled per handle, so usually no syscall), publishes the
/// generation it reads, and copies that generation's meta; after that every read is a plain load from
/// the shared mapping. The writer never reuses a page this snapshot can reach until `end()` (or
/// deinit) gives the slot back, so values are handed out without copying. A handle that may not
/// write the lock file pins the generation with a read lock instead (see `SnapshotPins`).
public final class ReadTransaction: Transaction {
    @exclusivity(unchecked) private var claim: SnapshotClaim
    /// When the snapshot's generation was committed (ns since 1970).
    @exclusivity(unchecked) public private(set) var commitTime: UInt64
    /// The snapshot's free-page tree (for verification and statistics).
    @exclusivity(unchecked) private(set) var freeTree: TreeRecord
    /// The free pages the snapshot's meta carries besides its free tree (format 4): decoded
    /// (`carriedDecoded`), or a reader's undecoded copy (`carriedCopy`), see `carriedFree()`.
    @exclusivity(unchecked) private var carriedDecoded: CarriedFreePages
    @exclusivity(unchecked) private var carriedCopy: [UInt64]
    /// The format the snapshot's meta is in, as a writer of it would write it (a page copy keeps it).
    @exclusivity(unchecked) private(set) var formatVersion: UInt32
    /// The snapshot's high-water mark.
    public var pageCount: UInt64 { access.committedPageCount }

    init(database: Database, access: PageAccess, meta: MetaPage, claim: SnapshotClaim) {
        self.claim = claim
        commitTime = meta.commitTime
        freeTree = meta.freeTree
        carriedDecoded = meta.carried
        carriedCopy = meta.carriedCopy
        formatVersion = meta.writtenFormat
        super.init(database: database, access: access, catalog: meta.catalog, generation: meta.transactionID)
    }

    deinit { if isActive { database.releaseSnapshot(claim) } }

    /// The free pages the snapshot's meta carries besides its free tree (format 4), decoded now.
    /// - Throws: `StrataError.corruptMeta` if the list is malformed (only a forged meta's is: its
    ///   checksum held when the snapshot began).
    func carriedFree() throws -> CarriedFreePages {
        guard !carriedCopy.isEmpty else { return carriedDecoded }
        switch CarriedFreePages.decode(copy: carriedCopy, transactionID: generation, pageCount: pageCount, pageSize: access.pageSize) {
        case .success(let list): return list
        case .failure(let malformed):
            throw StrataError.corruptMeta(path: database.path, reason: "generation \(generation) (meta \(generation % 2)): \(malformed.reason)")
        }
    }

    /// Starts another life of an ended transaction taken from the pool, on `meta`'s generation
    /// registered by `claim`. Trees opened in the last life stay known if the generation is the
    /// same (their records are that generation's); handles from it are refused (new serial).
    func renew(database: Database, meta: MetaPage, claim: SnapshotClaim, base: UnsafeRawPointer, newestTransaction: UInt64) {
        owner = database
        self.claim = claim
        commitTime = meta.commitTime
        freeTree = meta.freeTree
        carriedDecoded = meta.carried
        carriedCopy = meta.carriedCopy
        formatVersion = meta.writtenFormat
        if generation != meta.transactionID {
            trees.removeAll(keepingCapacity: true)
            generation = meta.transactionID
        }
        catalog = meta.catalog
        serial = Transaction.nextSerial()
        access.renew(base: base, committedPageCount: meta.pageCount, newestTransaction: newestTransaction)
        isActive = true
    }

    /// Readies an ended transaction to wait in the pool: it lets go of its handle.
    func park() {
        owner = nil
    }

    /// Ends the transaction and releases its snapshot. Values it handed out must not be used after.
    public func end() {
        guard isActive else { return }
        isActive = false
        access.endLease() // invalidates cursors: the snapshot's pages may be reused
        database.releaseSnapshot(claim)
    }
}
