import Glibc

extension LockFile {
    /// Opens the lock file for a handle in `mode`, and says how its read snapshots are registered.
    ///
    /// A handle that can write the lock file uses the reader table (`ReaderTable`). A read-only
    /// handle refused write access (`EACCES`, `EPERM`, `EROFS`: another user's store, a read-only
    /// directory or volume) falls back to reading: with a lock file in use or left valid, it maps
    /// it read-only and pins snapshots with read locks (`SnapshotPins`); with none it can use (no
    /// lock file, or a stale one nobody has open), it reads the newest commit alone (`.detached`).
    static func open(path: String, mode: AccessMode, requestedSlots: Int, pageSize: Int, dataFile: PosixFile, dataPath: String, dataInode: UInt64,
                     fileMode: mode_t, verifiedNewest: () throws -> MetaPage,
                     committedGeneration: () throws -> UInt64) throws -> (LockFile, SnapshotRegistration) {
        do {
            let lockFile = try LockFile(path: path, requestedSlots: requestedSlots, pageSize: pageSize, dataFile: dataFile, dataInode: dataInode,
                                        fileMode: fileMode, committedGeneration: committedGeneration)
            return (lockFile, .readerTable)
        } catch StrataError.io(operation: "open", _, let code) where mode == .readOnly && (code == EACCES || code == EPERM || code == EROFS) {
            if let shared = try LockFile(readingOnly: path, dataFile: dataFile, dataInode: dataInode, verifiedNewest: verifiedNewest) {
                return (shared, .pins(SnapshotPins(file: shared.file)))
            }
            // No usable lock file. A writer whose lock file was deleted still holds the data file's
            // writer lock; reading alone beside it would let it reuse this handle's pages.
            try LockFile.refuseIfAWriterHoldsTheDataFile(dataFile, lockPath: path)
            // Nobody is writing: the newest meta whose pages all verify.
            let newest = try verifiedNewest()
            return (try LockFile(detachedAt: newest.transactionID, dataPath: dataPath), .detached(newest))
        }
    }

    /// Joins the lock file through a read-only descriptor and a read-only mapping: it can follow
    /// the generation counter but never write. Nil if there is no lock file, or one that is not
    /// valid for this data file and that nobody has open (a writer would reset it; this handle
    /// cannot), or a valid one that nobody has open whose generation is not the data file's
    /// newest verified commit (lock files are never synced: after a power loss the counter can
    /// lag or lead the data file, and following it would wait forever for a meta that is not
    /// there, or read a commit whose pages never arrived).
    private convenience init?(readingOnly path: String, dataFile: PosixFile, dataInode: UInt64, verifiedNewest: () throws -> MetaPage) throws {
        let file: PosixFile
        do {
            file = try PosixFile(path: path, flags: O_RDONLY)
        } catch StrataError.io(_, _, let code) where code == ENOENT {
            return nil
        }
        // Shared: waits while a writer (re)initializes the file, excludes nobody else.
        try file.lockWaiting(offset: LockFile.setupLockByte, exclusive: false)
        defer { file.unlock(offset: LockFile.setupLockByte) }
        let header = try Header(of: file)
        guard header.isValid(forDataInode: dataInode) else {
            if try file.isLockedByOthers(offset: LockFile.openHandlesByte) { throw header.inUseMismatch(path: path) }
            return nil
        }
        let alone = try !file.isLockedByOthers(offset: LockFile.openHandlesByte)
        // A valid lock file nobody has open beside a running writer is a copy put in place of
        // the writer's (which it no longer reads): following it would freeze the generation.
        if alone { try LockFile.refuseIfAWriterHoldsTheDataFile(dataFile, lockPath: path) }
        // Holding the open-handles byte shared keeps a writer that opens later from resetting the
        // file (truncating it under this mapping would be a SIGBUS).
        guard try file.tryLock(offset: LockFile.openHandlesByte, exclusive: false) else {
            throw StrataError.misuse("could not join the store's open handles")
        }
        let memory = try SharedMemory(file: file, length: LockFile.byteCount(slots: header.slots), writable: false)
        self.init(file: file, memory: memory, slotCount: header.slots)
        if alone, generation.pointee.load(ordering: .acquiring) != (try verifiedNewest().transactionID) { return nil }
    }

    /// A private stand-in with the generation fixed at `generation` and no reader slots, for a
    /// handle that has no lock file to share. Its descriptor (on the data file) is never locked.
    private convenience init(detachedAt generation: UInt64, dataPath: String) throws {
        let file = try PosixFile(path: dataPath, flags: O_RDONLY)
        let memory = try SharedMemory(privateLength: LockFile.slotsOffset)
        self.init(file: file, memory: memory, slotCount: 0)
        self.generation.pointee.store(generation, ordering: .releasing)
    }
}

/// How a handle keeps the writer off the pages of the snapshots it reads.
enum SnapshotRegistration {
    /// A reader-table slot per snapshot: a handle that can write the lock file (the default).
    case readerTable
    /// A read lock per pinned generation: the lock file is readable only (see `SnapshotPins`).
    case pins(SnapshotPins)
    /// No lock file to share and no right to create one: the newest commit at open, read alone.
    /// No writer can be running (a writer creates the lock file first); if one appears anyway (as
    /// root), pages it rewrote before they are read are detected by their transaction id
    /// (`StrataError.snapshotOverwritten`); a page rewritten during a read is not.
    case detached(MetaPage)
}

/// What one read snapshot holds until it ends.
enum SnapshotClaim {
    case slot(Int)
    case pin(UInt64)
    case detached
}
