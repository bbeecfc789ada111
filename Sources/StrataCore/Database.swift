import Glibc
import Synchronization

/// A store: the `data` page file and the `lock` coordination file in one directory, shared by one
/// writer process and any number of reader processes.
///
/// ```swift
/// let db = try Database(path: "library.strata")
/// try db.write { tx in
///     let books = try tx.openOrCreateTree("books")
///     try tx.put("isbn:42", "Dune", in: books)
/// }
/// try db.read { tx in try tx.get("isbn:42", in: tx.tree("books")) }
/// ```
///
/// **Readers without write permission.** A `.readOnly` handle that may read the store's files but
/// not write the lock file (another user, an app extension, a read-only directory or volume) opens
/// all the same. With a lock file it maps it read-only, follows every new commit without
/// reopening, and protects each snapshot with an open-file-description read lock on one byte per
/// generation, which the writer sees (`F_OFD_GETLK`) and honours exactly as it honours a reader
/// slot; the kernel drops the lock if the process dies. Without a usable lock file (none, or a
/// stale one nobody has open) it reads the newest commit at open and never sees a later one. Such
/// a handle cannot write, reap dead reader slots, reset a damaged lock file or create a missing
/// one; it appears in the writer's `readerReport()` as a pin (slot -1, no pid or age). As a second
/// line of defence each page it reads must have been written no later than its snapshot, else
/// `StrataError.snapshotOverwritten`: this catches a page reused before it is read, not one
/// rewritten while it is being read, so it detects a missing pin but does not replace one.
/// Create a store others may read with `DatabaseOptions.fileMode` (e.g. 0o644).
public final class Database: Sendable {
    public let path: String
    public let mode: AccessMode
    public let pageSize: Int
    let options: DatabaseOptions
    let dataFile: PosixFile
    let io: any DataFileIO
    /// A second descriptor on the data file opened `O_DSYNC`, for full-durability meta writes: one
    /// synchronous write replaces write + fdatasync (and lets the device use a FUA write).
    let metaFile: PosixFile?
    let mapping: FileMapping
    let lockFile: LockFile
    let readers: ReaderTable
    /// How this handle's read snapshots keep the writer off their pages.
    let registration: SnapshotRegistration
    let writer: WriterSession?
    /// The newest generation's validated meta and catalog lookups, shared by read transactions.
    let snapshots = SnapshotCache()
    private let closed = Atomic<Bool>(false)

    /// State only the write path touches, always under `lock`.
    final class WriterSession: @unchecked Sendable {
        let lock = BlockingLock()
        /// The thread running a write transaction (to refuse nested writes instead of deadlocking).
        let owner = Atomic<UInt>(0)
        var committed: MetaPage
        var fileSize: UInt64
        var lastReap: UInt64 = 0
        var lastLongReaderCheck: UInt64 = 0
        /// Set when a failed commit could not be undone on disk: this handle refuses further
        /// writes; reopening the store resolves which generation is current.
        var isPoisoned = false
        /// `close()` was called from inside the write transaction: release the locks at its end.
        var releaseLocksWhenDone = false

        /// Single-page buffers of finished transactions, reused instead of reallocated.
        private var spareBuffers: [PageBuffer] = []
        private static let spareLimit = 4096

        init(committed: MetaPage, fileSize: UInt64) {
            self.committed = committed
            self.fileSize = fileSize
        }

        func pageBuffer(number: UInt64) -> PageBuffer {
            guard let buffer = spareBuffers.popLast() else { return PageBuffer(pageSize: committed.pageSize, number: number) }
            buffer.reassign(to: number)
            return buffer
        }

        /// Takes back a buffer of a finished transaction (only single pages, only up to a limit).
        func recycle(_ buffer: PageBuffer) {
            // A ByteView handed out by the transaction may still hold one of these: it stays
            // memory-safe (the buffer lives on) but shows newer bytes, as documented.
            if buffer.pageCount == 1 && spareBuffers.count < WriterSession.spareLimit {
                spareBuffers.append(buffer)
            }
        }
    }

    /// Opens (and, read-write, creates if missing) the store at `path`.
    public init(path: String, mode: AccessMode = .readWrite, options: DatabaseOptions = DatabaseOptions()) throws {
        guard PageLayout.isValidPageSize(options.pageSize) else {
            throw StrataError.misuse("page size \(options.pageSize) is not a power of two in 4096...32768")
        }
        self.path = path
        self.mode = mode
        self.options = options
        let canCreate = mode == .readWrite && options.createIfMissing
        try StoreDirectory.prepare(path: path, create: canCreate, fileMode: options.fileMode)
        let dataPath = path + "/data"
        if canCreate { try StoreDirectory.createDataFileIfMissing(at: dataPath, pageSize: options.pageSize, fileMode: options.fileMode) }

        do {
            dataFile = try PosixFile(path: dataPath, flags: mode == .readWrite ? O_RDWR : O_RDONLY)
        } catch StrataError.io(_, _, let code) where code == ENOENT {
            throw StrataError.notAStore(path: path, reason: "it has no data file (open it read-write to create a store)")
        }
        io = options.dataFileIO?(dataFile) ?? dataFile
        metaFile = mode == .readWrite && options.durability == .full && options.dataFileIO == nil
            ? try PosixFile(path: dataPath, flags: O_WRONLY | O_DSYNC) : nil
        let status = try dataFile.status()
        let inode = UInt64(status.st_ino)
        var newest = try MetaReader.newestMeta(of: dataFile, storePath: path)
        // The generation a fresh lock file starts from is read again under the set-up lock: a
        // writer may have committed since the read above.
        let openedData = dataFile
        (lockFile, registration) = try LockFile.open(path: path + "/lock", mode: mode, requestedSlots: options.readerSlots,
                                                     pageSize: newest.pageSize, dataPath: dataPath, dataInode: inode,
                                                     fileMode: options.fileMode, newest: newest) {
            try MetaReader.newestMeta(of: openedData, storePath: path).transactionID
        }
        pageSize = newest.pageSize
        readers = ReaderTable(lockFile: lockFile)

        var fileSize = try dataFile.size()
        if mode == .readWrite {
            try Database.acquireWriterLock(lockFile, dataFile: dataFile, path: path, wait: options.writerLockWait)
            // A previous writer may have committed between our first look and the lock.
            newest = try MetaReader.newestMeta(of: dataFile, storePath: path)
            fileSize = try dataFile.size()
            try MetaReader.checkLength(fileSize, of: newest, storePath: path)
            lockFile.writerPID.pointee.store(UInt32(bitPattern: getpid()), ordering: .releasing)
            // Publishing here also finishes the commit of a writer that died between writing its
            // meta and publishing it.
            lockFile.generation.pointee.store(newest.transactionID, ordering: .sequentiallyConsistent)
            writer = WriterSession(committed: newest, fileSize: fileSize)
        } else {
            try MetaReader.checkLength(fileSize, of: newest, storePath: path)
            writer = nil
        }
        mapping = try FileMapping(file: dataFile, minimumLength: Int(fileSize))
        if mode == .readWrite { readers.reapDeadReaders() }
    }

    deinit {
        close()
        readers.releaseOwnedSlots(onlyIdle: false)
        lockFile.close()
        dataFile.close()
    }

    /// The writer lock is taken on the lock file and then on the data file: a writer whose lock
    /// file was deleted (or replaced) under it still holds the data file's lock, so a second
    /// writer arriving with a fresh lock file is refused too.
    private static func acquireWriterLock(_ lockFile: LockFile, dataFile: PosixFile, path: String, wait: WriterLockWait) throws {
        try acquireLockFileWriterLock(lockFile, path: path, wait: wait)
        let deadline: UInt64? = {
            switch wait {
            case .fail: return Clock.monotonicNanoseconds()
            case .wait(let seconds): return Clock.monotonicNanoseconds() &+ Clock.nanoseconds(seconds)
            case .forever: return nil
            }
        }()
        while try !dataFile.tryLock(offset: LockFile.writerLockByte) {
            if let deadline, Clock.monotonicNanoseconds() >= deadline {
                lockFile.file.unlock(offset: LockFile.writerLockByte)
                throw StrataError.writerLocked(path: path, holderPID: 0)
            }
            usleep(2000)
        }
    }

    private static func acquireLockFileWriterLock(_ lockFile: LockFile, path: String, wait: WriterLockWait) throws {
        if try lockFile.file.tryLock(offset: LockFile.writerLockByte) { return }
        let holder = { Int32(bitPattern: lockFile.writerPID.pointee.load(ordering: .acquiring)) }
        switch wait {
        case .fail:
            throw StrataError.writerLocked(path: path, holderPID: holder())
        case .forever:
            try lockFile.file.lockWaiting(offset: LockFile.writerLockByte)
        case .wait(let seconds):
            let deadline = Clock.monotonicNanoseconds() &+ Clock.nanoseconds(seconds)
            var pause: UInt32 = 500
            while Clock.monotonicNanoseconds() < deadline {
                usleep(pause)
                pause = min(pause * 2, 20_000)
                if try lockFile.file.tryLock(offset: LockFile.writerLockByte) { return }
            }
            throw StrataError.writerLockTimedOut(path: path, holderPID: holder(), seconds: seconds)
        }
    }

    /// Releases the writer lock (read-write handles) and idle reader slots. Transactions already
    /// running may finish; new ones throw `StrataError.closed`.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let writer {
            if writer.owner.load(ordering: .relaxed) == UInt(pthread_self()) {
                // Called inside this thread's own write transaction: waiting for it would deadlock.
                // The locks go when that transaction ends (see `releaseWriter`).
                writer.releaseLocksWhenDone = true
            } else {
                writer.lock.withLock { releaseWriterLocks() }
            }
        }
        readers.releaseOwnedSlots(onlyIdle: true)
        ChangeMonitor.shared.endStreams(of: self)
    }

    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    func checkOpen() throws {
        guard !closed.load(ordering: .acquiring) else { throw StrataError.closed(what: "store handle for \(path)") }
    }

    /// The id of the last committed transaction: one atomic load from shared memory, valid in every
    /// process that has the store open. It only grows.
    public var generation: UInt64 { lockFile.generation.pointee.load(ordering: .acquiring) }

    /// The wall-clock time (ns since 1970) of the last commit, as published by the writer.
    public var lastCommitTime: UInt64 { lockFile.lastCommitTime.pointee.load(ordering: .acquiring) }

    // MARK: Reading

    /// Begins a read transaction on the latest committed generation. End it with `end()` (deinit
    /// also ends it); a long-lived one keeps the writer from reusing the pages it can reach.
    public func beginRead() throws -> ReadTransaction {
        try checkOpen()
        let (claim, meta) = try claimSnapshot()
        do {
            let base = try mapping.base(covering: Int(meta.pageCount) * pageSize)
            let access = PageAccess(pageSize: pageSize, base: base, committedPageCount: meta.pageCount, mapping: mapping, isWritable: false,
                                    verifiesChecksums: options.verifyChecksums,
                                    newestTransaction: newestReadableTransaction(claim, meta: meta))
            return ReadTransaction(database: self, access: access, meta: meta, claim: claim)
        } catch {
            releaseSnapshot(claim)
            throw error
        }
    }

    /// Runs `body` in a read transaction that ends when it returns.
    @discardableResult
    public func read<Result>(_ body: (ReadTransaction) throws -> Result) throws -> Result {
        let transaction = try beginRead()
        defer { transaction.end() }
        return try body(transaction)
    }

    /// Registers `slot` on the current generation and returns that generation's meta.
    func snapshotMeta(slot: Int) throws -> MetaPage {
        let meta = try snapshotMeta(register: { readers.publish(slot: slot, generation: $0, pageCount: 0) }, withdraw: { _ in })
        readers.pageCountField(slot).pointee.store(meta.pageCount, ordering: .relaxed)
        return meta
    }

    /// Registers a snapshot of the current generation (`register`, undone by `withdraw` when the
    /// generation moved before the registration was seen) and returns that generation's meta.
    func snapshotMeta(register: (UInt64) throws -> Void, withdraw: (UInt64) -> Void) throws -> MetaPage {
        var attempts = 0
        while true {
            let generation = lockFile.generation.pointee.load(ordering: .acquiring)
            try register(generation)
            if lockFile.generation.pointee.load(ordering: .sequentiallyConsistent) == generation {
                // Already validated by an earlier transaction of this generation (see `SnapshotCache`).
                if let meta = try snapshots.meta(generation: generation) ?? validatedMeta(generation: generation) {
                    return meta
                }
            }
            withdraw(generation)
            attempts += 1
            if attempts > 100 { sched_yield() }
            if attempts > 20_000 {
                throw StrataError.corruptMeta(path: path, reason: "the meta of published generation \(generation) does not validate")
            }
        }
    }

    /// Copies and validates the meta of `generation` (nil if it does not validate: the caller
    /// retries), and remembers it for the other transactions of that generation.
    func validatedMeta(generation: UInt64) throws -> MetaPage? {
        let metaBase = try mapping.base(covering: 2 * pageSize)
        return withUnsafeTemporaryAllocation(byteCount: MetaPage.encodedSize, alignment: 8) { copy in
            // The writer may be rewriting the other meta, never this one: copy, then validate.
            memcpy(copy.baseAddress!, metaBase + Int(generation % 2) * pageSize, MetaPage.encodedSize)
            guard case .success(let meta) = MetaPage.decode(UnsafeRawBufferPointer(copy), slot: generation % 2),
                  meta.transactionID == generation else { return nil }
            snapshots.remember(meta)
            return meta
        }
    }

    // MARK: Writing

    /// Runs `body` in the write transaction and commits it; if `body` throws, nothing is written.
    /// Other writers in this process wait; a nested call throws `misuse`.
    @discardableResult
    public func write<Result>(_ body: (WriteTransaction) throws -> Result) throws -> Result {
        let transaction = try beginWrite()
        do {
            let result = try body(transaction)
            if transaction.isActive { try transaction.commit() }
            return result
        } catch {
            transaction.abort()
            throw error
        }
    }

    /// Begins the write transaction, waiting for any other one in this process to finish. It must
    /// end with `commit()` or `abort()` (deinit aborts); until then other writers here wait.
    public func beginWrite() throws -> WriteTransaction {
        try checkOpen()
        guard let writer else { throw StrataError.readOnly }
        let thread = UInt(pthread_self())
        guard writer.owner.load(ordering: .relaxed) != thread else {
            throw StrataError.misuse("write transactions cannot be nested; use the transaction you already have")
        }
        writer.lock.lock()
        writer.owner.store(thread, ordering: .relaxed)
        do {
            try checkOpen()
            guard !writer.isPoisoned else {
                throw StrataError.misuse("a failed commit of this handle could not be rolled back on disk; close the store and open it again before writing")
            }
            return try beginWrite(writer)
        } catch {
            releaseWriter(writer)
            throw error
        }
    }

    func releaseWriter(_ writer: WriterSession) {
        writer.owner.store(0, ordering: .relaxed)
        if writer.releaseLocksWhenDone {
            writer.releaseLocksWhenDone = false
            releaseWriterLocks()
        }
        writer.lock.unlock()
    }

    private func releaseWriterLocks() {
        lockFile.writerPID.pointee.store(0, ordering: .releasing)
        dataFile.unlock(offset: LockFile.writerLockByte)
        lockFile.file.unlock(offset: LockFile.writerLockByte)
    }

    private func beginWrite(_ writer: WriterSession) throws -> WriteTransaction {
        let base = writer.committed
        var oldest = try oldestRegisteredSnapshot(below: base.transactionID)
        let now = Clock.monotonicNanoseconds()
        if let pinned = oldest, pinned < base.transactionID, now - writer.lastReap > 1_000_000_000 {
            // Someone pins an old snapshot: make sure it is not a dead process.
            writer.lastReap = now
            if readers.reapDeadReaders() > 0 { oldest = try oldestRegisteredSnapshot(below: base.transactionID) }
        }
        if let limit = options.longLivedReaderLimit, let report = options.onLongLivedReaders, oldest != nil,
           now - writer.lastLongReaderCheck > 1_000_000_000 {
            writer.lastLongReaderCheck = now
            if let pinning = try? longLivedReaders(olderThan: limit), !pinning.isEmpty { report(pinning) }
        }
        let limit = min(base.transactionID, oldest ?? base.transactionID)
        let mapBase = try mapping.base(covering: Int(base.pageCount) * pageSize)
        let access = PageAccess(pageSize: pageSize, base: mapBase, committedPageCount: base.pageCount, mapping: mapping, isWritable: true,
                                verifiesChecksums: options.verifyChecksums)
        return WriteTransaction(database: self, session: writer, access: access, base: base, reuseLimit: limit)
    }
}
