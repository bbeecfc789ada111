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
    /// The store directory's path, as passed to `init(path:mode:options:)`.
    public let path: String
    /// Whether this handle is the writer (`.readWrite`) or a reader (`.readOnly`).
    public let mode: AccessMode
    /// The store's page size in bytes, as recorded at creation (it may differ from `DatabaseOptions.pageSize`).
    public let pageSize: Int
    /// The hash of this store's page checksums, named by its format version (`PageLayout`).
    let pageChecksum: PageChecksum
    /// The format of the meta this handle opened, as its writer writes it (`MetaPage.writtenFormat`):
    /// `storeFormatVersion` reports it, open or closed. This build never changes a store's format
    /// in place; a newer build's later meta in a newer format reaches this handle as
    /// `unsupportedFormat` from its reads, not as a change of this value.
    let openedFormat: UInt32
    let options: DatabaseOptions
    let dataFile: PosixFile
    let io: any DataFileIO
    let mapping: FileMapping
    let lockFile: LockFile
    let readers: ReaderTable
    /// How this handle's read snapshots keep the writer off their pages.
    let registration: SnapshotRegistration
    /// Set when this handle verified the store at open (it was the first to open it, or the
    /// writer) and a newer commit's meta named pages that were not all intact, so the store opened
    /// at the commit before it. nil otherwise. See `SkippedCommit`.
    public let skippedCommit: SkippedCommit?
    let writer: WriterSession?
    /// The newest generation's validated meta and catalog lookups, shared by read transactions.
    let snapshots = SnapshotCache()
    /// Ended read transactions kept for reuse by `beginRead()` (see `IdlePool`).
    let idleReads = IdlePool<ReadTransaction>()
    /// Idle snapshot readers (with their reader slots) kept for reuse by `withSnapshot`.
    let idleSnapshots = IdlePool<SnapshotReader>()
    private let closed = Atomic<Bool>(false)

    /// State only the write path touches, always under `lock`.
    final class WriterSession: @unchecked Sendable {
        let lock = BlockingLock()
        /// Write requests of this process waiting to be committed together (see `GroupCommit.swift`).
        let writeQueue: WriteQueue
        /// The thread running a write transaction (to refuse nested writes instead of deadlocking).
        let owner = Atomic<UInt>(0)
        // The variables below are exempt from runtime exclusivity checks (several per put and
        // commit): they are touched only under `lock`, by one thread at a time, and no access to
        // them is held across a call that reaches them again.
        @exclusivity(unchecked) var committed: MetaPage
        @exclusivity(unchecked) var fileSize: UInt64
        @exclusivity(unchecked) var lastReap: UInt64 = 0
        @exclusivity(unchecked) var lastLongReaderCheck: UInt64 = 0
        /// Set when a failed commit could not be undone on disk: this handle refuses further
        /// writes; reopening the store resolves which generation is current.
        @exclusivity(unchecked) var isPoisoned = false
        /// `close()` was called while a write transaction held `lock`: the transaction releases the
        /// process's writer locks when it ends (`releaseWriter`). Atomic: `close()` sets it from
        /// any thread without the lock.
        let releaseLocksWhenDone = Atomic<Bool>(false)
        /// Pages this session took at the file's end to keep a commit's pages together while
        /// reusable ones were on hand (see `PageAllocator.freshPageBudget`).
        @exclusivity(unchecked) var freshPagesTaken = 0
        /// Pages the last commit of this session wrote: a transaction after a large one does not
        /// take pages at the file's end for runs (it is likely large too, and scattered anyway).
        @exclusivity(unchecked) var lastCommitPages = 0
        /// The pages of the last commit, for the next transaction's dirty table to be sized for
        /// (`takeDirtyTable`); that transaction takes it and leaves 0, so a transaction after it
        /// that aborts or commits nothing does not size its table for that commit again.
        @exclusivity(unchecked) var pagesExpectedNext = 0
        /// The tree pages the last commit wrote (see `LastCommitPages.swift`).
        @exclusivity(unchecked) var lastCommit = DirtyPages()
        /// Branch pages earlier commits of this session wrote, still committed (`LastCommitPages.swift`).
        @exclusivity(unchecked) var builtBranches = DirtyPages()
        /// The numbers of the branch pages in `lastCommit`, noted when it was kept.
        @exclusivity(unchecked) var lastCommitBranches: [UInt64] = []
        /// Catalog entries of the newest generation this session knows (see `WriterCatalogMemory`).
        @exclusivity(unchecked) var catalogMemory = WriterCatalogMemory()
        /// The emptied dirty-page table of the last finished transaction, with its storage, for
        /// the next one: allocating and growing a table per transaction was ~5k instructions of a
        /// small commit.
        @exclusivity(unchecked) private var spareDirtyTable = DirtyPages()
        /// Tables larger than this many slots are not kept (a large transaction's would stay).
        private static let spareDirtyTableLimit = 256

        /// Single-page buffers of finished transactions, reused instead of reallocated.
        @exclusivity(unchecked) private var spareBuffers: [PageBuffer] = []
        private static let spareLimit = 4096

        init(committed: MetaPage, fileSize: UInt64, durability: Durability) {
            self.committed = committed
            self.fileSize = fileSize
            writeQueue = WriteQueue(gathers: durability != .none)
        }

        func pageBuffer(number: UInt64) -> PageBuffer {
            guard let buffer = spareBuffers.popLast() else {
                // Zeroed once: a copy-on-write copy leaves a page's free gap as the buffer held
                // it (`PageBuffer.copyTreePage`), and that gap is written to the file. So a gap
                // holds zeros or bytes of this store's own pages (possibly of aborted transactions
                // or deleted entries: a raw copy of the file holds them), never other
                // memory of the process.
                let fresh = PageBuffer(pageSize: committed.pageSize, number: number)
                memset(fresh.memory, 0, fresh.byteCount)
                return fresh
            }
            buffer.reassign(to: number)
            return buffer
        }

        /// An empty dirty-page table for a new transaction, with storage if one is on hand.
        func takeDirtyTable() -> DirtyPages {
            // After a commit too large for the kept table, the next transaction is likely large
            // too: its table starts at that size (growing from 32 slots to a batch of a thousand
            // typed inserts took seven rehashes, ~300 instructions an insert). Only that one:
            // later ones start small until another commit writes many pages.
            let expected = pagesExpectedNext
            pagesExpectedNext = 0
            if expected * 2 > WriterSession.spareDirtyTableLimit { return DirtyPages(expecting: expected) }
            let table = spareDirtyTable
            spareDirtyTable = DirtyPages()
            return table
        }

        /// Takes back the emptied table of a finished transaction (leaving `table` without
        /// storage), unless it is large.
        func keepDirtyTable(_ table: inout DirtyPages) {
            guard table.isEmpty, table.capacity <= WriterSession.spareDirtyTableLimit else { return }
            spareDirtyTable = table
            table = DirtyPages()
        }

        /// Takes back a buffer of a finished transaction (only single pages, only up to a limit).
        func recycle(_ buffer: PageBuffer) {
            // A ByteView handed out by the transaction may still hold one of these: it stays
            // memory-safe (the buffer lives on) but shows newer bytes, as documented.
            if buffer.pageCount == 1 && spareBuffers.count < WriterSession.spareLimit {
                spareBuffers.append(buffer)
            }
        }

        /// `recycle` of a buffer known to hold one page (a tree page of `lastCommit`), handed
        /// over: no retain, so the buffer object (out of the cache after a large commit) is not
        /// touched.
        func recycleTreePage(_ buffer: consuming PageBuffer) {
            if spareBuffers.count < WriterSession.spareLimit { spareBuffers.append(buffer) }
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
        let status = try dataFile.status()
        let inode = UInt64(status.st_ino)
        var newest = try MetaReader.newestMeta(of: dataFile, storePath: path, verifying: false)
        // The generation a fresh lock file starts from is read again under the set-up lock: a
        // writer may have committed since the read above. Only then (nobody else has the store
        // open) are the newest meta's pages verified.
        let openedData = dataFile
        var verified: (choice: MetaReader.Choice, metaPages: [UInt8])?
        var skipped: SkippedCommit?
        let verifyNewest = {
            let choice = try MetaReader.choose(in: openedData, storePath: path)
            verified = (choice, try MetaReader.metaPages(of: openedData, pageSize: choice.meta.pageSize))
            skipped = choice.skipped
            return choice.meta
        }
        // A lock file created here takes the data file's modes (`options.fileMode` made those
        // when the store was created): created by whoever opens a store first, it must not lock
        // out the users the store is shared with.
        (lockFile, registration) = try LockFile.open(path: path + "/lock", mode: mode, requestedSlots: options.readerSlots,
                                                     pageSize: newest.pageSize, dataFile: dataFile, dataPath: dataPath, dataInode: inode,
                                                     fileMode: mode_t(status.st_mode) & 0o666, verifiedNewest: verifyNewest) {
            try verifyNewest().transactionID
        }
        pageSize = newest.pageSize
        // Fixed for the file's life; both metas agree on it (`MetaReader.choose`).
        pageChecksum = newest.pageChecksum
        readers = ReaderTable(lockFile: lockFile)

        var fileSize = try dataFile.size()
        if mode == .readWrite {
            try WriterLock.acquire(lockFile, dataFile: dataFile, path: path, wait: options.writerLockWait)
            // A previous writer may have committed between our first look and the lock. If this
            // handle verified at open and no writer has touched the metas since, that choice
            // stands (verifying costs up to two commits' pages); otherwise choose again.
            let choice: MetaReader.Choice
            if let verified, try MetaReader.metaPages(of: dataFile, pageSize: verified.choice.meta.pageSize) == verified.metaPages {
                choice = verified.choice
            } else {
                choice = try MetaReader.choose(in: dataFile, storePath: path)
            }
            skipped = choice.skipped ?? skipped
            // A file's format never changes in place, so the meta chosen under the lock names the
            // checksum of the one chosen at the first look; another means the file was replaced.
            guard choice.meta.pageChecksum == pageChecksum else {
                throw StrataError.corruptMeta(path: path, reason: "the store's format changed from \(pageChecksum.formatVersion) to \(choice.meta.pageChecksum.formatVersion) while it was being opened")
            }
            // A commit is published only after its sync, so a published generation that no longer
            // verifies was damaged on the disk since. Going back to the commit before it under the
            // handles that have the store open would break their snapshots (the generation only
            // grows; pages of the newer commit would be reused under a reader of it): refuse.
            let published = lockFile.generation.pointee.load(ordering: .acquiring)
            if choice.meta.transactionID < published {
                throw StrataError.corruptMeta(path: path, reason: "commit \(published), which other handles of this store may be reading, no longer verifies (\(choice.skipped?.reason ?? "its meta is damaged")); once every handle is closed the store opens at commit \(choice.meta.transactionID) and reports the skip (Database.skippedCommit)")
            }
            fileSize = try dataFile.size()
            try MetaReader.checkLength(fileSize, of: choice.meta, storePath: path)
            newest = try WriterRecovery.prepare(dataFile, choice: choice, durability: options.durability)
            // Publishing here also finishes the commit of a writer that died between writing its
            // meta and publishing it (its pages verified and are now synced).
            lockFile.generation.pointee.store(newest.transactionID, ordering: .sequentiallyConsistent)
            writer = WriterSession(committed: newest, fileSize: fileSize, durability: options.durability)
        } else {
            try MetaReader.checkLength(fileSize, of: verified?.choice.meta ?? newest, storePath: path)
            writer = nil
        }
        skippedCommit = skipped
        openedFormat = newest.writtenFormat // every meta of a file is in its format (`MetaReader`)
        mapping = try FileMapping(file: dataFile, minimumLength: Int(fileSize))
        if mode == .readWrite { readers.reapDeadReaders() }
    }

    deinit {
        close()
        idleSnapshots.drain() // they write their slots as they go: before the slots are given back
        readers.releaseOwnedSlots(onlyIdle: false)
        lockFile.close()
        dataFile.close()
    }

    /// Releases the writer lock (read-write handles) and idle reader slots. Transactions already
    /// running may finish; new ones throw `StrataError.closed`. Never waits: a write transaction
    /// running at the time (even the one whose body calls `close()`, sync or async) releases the
    /// writer lock when it ends.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if let writer {
            // Never wait for a running write transaction: close() may be called from inside its
            // body — on the thread that runs it, or from an async body whose transaction belongs
            // to another thread (waiting would deadlock, on the cooperative pool at that). A
            // running transaction releases the locks when it ends instead (`releaseWriter`).
            if writer.lock.tryLock() {
                releaseWriterLocks()
                writer.lock.unlock()
            } else {
                writer.releaseLocksWhenDone.store(true, ordering: .sequentiallyConsistent)
                // The transaction may have ended between the two looks, before it read the flag;
                // the exchange makes sure exactly one side releases the locks.
                if writer.lock.tryLock() {
                    if writer.releaseLocksWhenDone.exchange(false, ordering: .sequentiallyConsistent) { releaseWriterLocks() }
                    writer.lock.unlock()
                }
            }
        }
        idleSnapshots.drain() // gives their sticky slots back, idle: before idle slots are released
        readers.releaseOwnedSlots(onlyIdle: true)
        idleReads.drain()
        ChangeMonitor.shared.endStreams(of: self)
    }

    /// Whether `close()` has been called on this handle.
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
            let newestTransaction = newestReadableTransaction(claim, meta: meta)
            if let reused = idleReads.take() {
                reused.renew(database: self, meta: meta, claim: claim, base: base, newestTransaction: newestTransaction)
                return reused
            }
            let access = PageAccess(pageSize: pageSize, pageChecksum: pageChecksum, base: base, committedPageCount: meta.pageCount,
                                    mapping: mapping, isWritable: false, verifiesChecksums: options.verifyChecksums,
                                    newestTransaction: newestTransaction)
            return ReadTransaction(database: self, access: access, meta: meta, claim: claim)
        } catch {
            releaseSnapshot(claim)
            throw error
        }
    }

    /// Runs `body` in a read transaction that ends when it returns.
    @discardableResult
    public func read<Result>(_ body: (ReadTransaction) throws -> Result) throws -> Result {
        var transaction = try beginRead()
        defer { endAndRecycle(&transaction) }
        return try body(transaction)
    }

    /// Ends a read transaction begun for one call, and keeps it for reuse if the call kept no
    /// reference to it (see `ReadTransactionPool`).
    func endAndRecycle(_ transaction: inout ReadTransaction) {
        transaction.end()
        if isKnownUniquelyReferenced(&transaction) {
            transaction.park()
            idleReads.park(transaction)
        }
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
        try registeredState(register: register, withdraw: withdraw).meta
    }

    /// Registers a snapshot of the current generation (`register`, undone by `withdraw` when the
    /// generation moved before the registration was seen) and returns that generation's state:
    /// the handle's cached one, or the meta decoded and validated now.
    @inline(__always)
    func registeredState(register: (UInt64) throws -> Void, withdraw: (UInt64) -> Void) throws -> GenerationState {
        var attempts = 0
        while true {
            let generation = lockFile.generation.pointee.load(ordering: .acquiring)
            try register(generation)
            if lockFile.generation.pointee.load(ordering: .sequentiallyConsistent) == generation {
                // Already validated by an earlier reader of this generation (see `SnapshotCache`).
                if let state = try snapshots.state(generation: generation) ?? validatedState(generation: generation) {
                    return state
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
    /// retries), and remembers it for the other readers of that generation.
    /// - Throws: `StrataError.unsupportedFormat` if it is a valid meta of a format this build does
    ///   not know (a newer build committed it; a torn copy fails the checksum instead).
    func validatedState(generation: UInt64) throws -> GenerationState? {
        let metaBase = try mapping.base(covering: 2 * pageSize)
        return try withUnsafeTemporaryAllocation(byteCount: MetaPage.encodedSize, alignment: 8) { copy in
            // The writer can be rewriting this very slot: a slow reader may still be here when
            // the writer commits g+1 and then g+2, which reuses the slot of g. The copy is
            // therefore taken first and trusted only if its checksum validates and it names
            // `generation` itself; a torn copy or a newer meta fails that check and the caller
            // retries on the generation then published. A published generation was synced
            // before it was published: its page list (not copied) needs no verification. A valid
            // meta of a format this build does not know was committed by a newer build: refused
            // at once with a typed error (retrying would only end in `corruptMeta`). One naming
            // another page checksum than the store's was forged (`PageLayout`): never accepted. The
            // carried free pages are copied after the fixed part; their own checksum, seeded by
            // the generation, fails if the slot was rewritten in between. They are not decoded
            // here (only `check`, `copy` and `readerReport` use them: `carriedFree()`), so a
            // malformed list fails those, not every read.
            let slot = metaBase + Int(generation % 2) * pageSize
            memcpy(copy.baseAddress!, slot, MetaPage.encodedSize)
            let header = UnsafeRawBufferPointer(copy)
            let decoded = MetaPage.decode(header, slot: generation % 2)
            if case .failure(.unsupportedVersion(let version)) = decoded {
                throw StrataError.unsupportedFormat(path: path, found: version, supported: PageLayout.formatVersion)
            }
            guard case .success(let fixed) = decoded, fixed.transactionID == generation, fixed.pageChecksum == pageChecksum,
                  let meta = fixed.copyingCarried(header: header, slot: slot) else { return nil }
            return snapshots.remember(meta)
        }
    }

    // MARK: Writing

    /// Runs `body` in a write transaction and commits it; if `body` throws, nothing of it is
    /// written. Returns once the commit is durable (per the store's durability). A call from
    /// inside a write body throws `misuse`.
    ///
    /// **Group commit.** Calls from many threads share commits: while one commit is in flight,
    /// arriving calls queue, and the next commit runs all their bodies, each in its own nested
    /// transaction (`WriteTransaction.nested`), then syncs once. A body that throws is rolled back
    /// alone and its caller gets its error; a commit that fails fails every caller of its group.
    /// Writes are serializable in queue order: a body sees the effects of every write committed or
    /// queued before it. Consequences for bodies:
    /// - a body may run on another thread than its caller (the group's leader) while its caller
    ///   waits: it must not rely on thread-local state, and must not wait for another thread's
    ///   write (that one may be queued behind it);
    /// - `commit()` in a body throws `misuse` (the write commits when the body returns); `abort()` discards
    ///   only the body's own changes.
    /// A lone writer runs its body on its own thread in a plain transaction, as before. When
    /// several callers are inside and commits sync, a group's leader first waits briefly (about
    /// half a commit, at most 1 ms) for the callers just woken by the previous commit, so that
    /// they share the next flush (see `GroupCommit.swift`).
    ///
    /// It blocks the calling thread for a commit or more: call it from your own threads or a
    /// dispatch queue, never from the cooperative pool (the typed layer's `async` APIs do that
    /// for you).
    @discardableResult
    public func write<Result>(_ body: (WriteTransaction) throws -> Result) throws -> Result {
        try checkOpen()
        guard let writer else { throw StrataError.readOnly }
        guard writer.owner.load(ordering: .relaxed) != UInt(pthread_self()) else {
            throw StrataError.misuse("write transactions cannot be nested; use the transaction you already have (or its nested())")
        }
        return try groupWrite(body, writer: writer)
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
        if writer.releaseLocksWhenDone.exchange(false, ordering: .sequentiallyConsistent) {
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
        // The next commit's meta must still be a valid one (`MetaPage.largestTransactionID`): a
        // store that has reached the limit (only a forged one can) takes no more commits.
        guard base.transactionID < MetaPage.largestTransactionID else {
            throw StrataError.corruptMeta(path: path, reason: "its newest commit is transaction \(base.transactionID), the largest a store may hold; only a damaged or forged store gets there")
        }
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
        let access = PageAccess(pageSize: pageSize, pageChecksum: pageChecksum, base: mapBase, committedPageCount: base.pageCount,
                                mapping: mapping, isWritable: true, verifiesChecksums: options.verifyChecksums)
        access.dirty = writer.takeDirtyTable()
        let transaction = WriteTransaction(database: self, session: writer, access: access, base: base, reuseLimit: limit)
        do { try transaction.takeCarriedFreePages() } catch {
            transaction.end() // the caller releases the writer
            throw error
        }
        return transaction
    }
}
