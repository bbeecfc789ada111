/// How `put` treats an existing key.
public enum PutMode: Sendable {
    /// Insert or replace.
    case upsert
    /// Insert only; an existing key throws `StrataError.keyExists` and nothing changes.
    case insert
}

/// The one write transaction of a store: reads see the committed state plus its own changes;
/// nothing it does is visible to anyone else until `commit`, and an error aborts all of it.
///
/// Copy-on-write: a page reachable from a committed snapshot is never modified. The first change to
/// such a page copies it into a dirty buffer under a newly allocated page number and records the old
/// number as freed by this transaction (see `PageAllocator`).
public final class WriteTransaction: Transaction {
    /// The id this transaction commits as (the next generation).
    public let transactionID: UInt64
    let base: MetaPage
    let session: Database.WriterSession
    // The stored state below is exempt from runtime exclusivity checks (a measurable share of
    // every put: ~800 instructions of a `fillrandom` put went to them, callgrind): a write
    // transaction is used by one thread at a time (the writer lock hands it over), and no access
    // to its state is held across a call that could reach the same state again.
    @exclusivity(unchecked) var allocator: PageAllocator
    /// Set when an operation threw after it had started changing pages: the half-applied change
    /// must not be committed.
    @exclusivity(unchecked) var hasFailed = false
    /// Set while a `Database.write` body runs on this transaction: the write commits when the
    /// body returns, so `commit()` there is refused, whether the body runs alone or grouped with
    /// other writers' bodies (where it runs as a nested level and could not commit by itself).
    @exclusivity(unchecked) var isInsideWriteBody = false
    /// The open nested transactions, innermost last (see `NestedTransaction.swift`).
    @exclusivity(unchecked) var nestedFrames: [NestedFrame] = []
    /// The leaf of the last insert into each tree, for the next one (see `LeafHint`). No runtime
    /// exclusivity check (read by every put): only the thread running the transaction touches
    /// it, and no access to it overlaps another.
    @exclusivity(unchecked) var leafHints = LeafHints()
    /// Inserts that went through the hint (for tests).
    @exclusivity(unchecked) var leafHintInserts = 0
    /// Prefix lookups answered from the hinted leaf without a descent (for tests).
    @exclusivity(unchecked) var leafHintLookups = 0
    /// Pages copied from the last commit's buffers instead of the file (for tests).
    @exclusivity(unchecked) var lastCommitCopies = 0

    /// Runs one modifying operation; if it throws after changing pages, the transaction is failed.
    func modifying<Result>(_ operation: () throws -> Result) throws -> Result {
        let stamp = access.modificationCount
        do {
            return try operation()
        } catch {
            if access.modificationCount != stamp { hasFailed = true }
            throw error
        }
    }

    /// Reused across splits to avoid an allocation per split; most transactions never split.
    lazy var scratch = PageBuffer(pageSize: access.pageSize, number: 0)

    init(database: Database, session: Database.WriterSession, access: PageAccess, base: MetaPage, reuseLimit: UInt64) {
        transactionID = base.transactionID + 1
        self.session = session
        self.base = base
        let carries = MetaPage.carriesFreePages(formatVersion: base.writtenFormat)
        allocator = PageAllocator(nextPage: base.pageCount, committedPageCount: base.pageCount,
                                  freeTree: base.freeTree, reuseLimit: reuseLimit,
                                  carriedCapacity: carries ? CarriedFreePages.wordCapacity(pageSize: base.pageSize) : 0)
        super.init(database: database, access: access, catalog: base.catalog, generation: base.transactionID)
    }

    var pageSize: Int { access.pageSize }

    // MARK: Trees

    /// Creates an empty tree; throws `treeExists` if the name is taken.
    @discardableResult
    public func createTree(_ name: String) throws -> Tree {
        try checkActive()
        guard !name.isEmpty, name.utf8.count <= PageLayout.maximumKeySize(pageSize: pageSize) else {
            throw StrataError.misuse("tree names must be 1...\(PageLayout.maximumKeySize(pageSize: pageSize)) bytes of UTF-8")
        }
        var fresh = TreeRecord()
        fresh.created = transactionID
        fresh.lastModified = transactionID
        if let index = openedTreeIndex(name) {
            guard trees[index].isDropped else { throw StrataError.treeExists(name: name) }
            // The dropped tree's handles name the new one from here (see `renameTree`).
            access.modificationCount += 1
            trees[index] = TreeState(name: name, record: fresh, isDirty: true)
            return Tree(name: name, index: index, transactionSerial: serial)
        }
        if try treeIfPresent(name) != nil { throw StrataError.treeExists(name: name) }
        return register(TreeState(name: name, record: fresh, isDirty: true))
    }

    /// Opens the tree, creating it if it does not exist.
    public func openOrCreateTree(_ name: String) throws -> Tree {
        try treeIfPresent(name) ?? createTree(name)
    }

    /// Deletes the tree and every entry in it; its pages become free.
    public func dropTree(_ tree: Tree) throws {
        let index = try state(of: tree)
        let record = trees[index].record
        try modifying {
            access.modificationCount += 1
            try freeSubtree(record.root, level: 1, depth: record.depth)
        }
        trees[index].record = TreeRecord()
        trees[index].isDropped = true
        trees[index].isDirty = true
    }

    /// Removes every entry, keeping the tree.
    public func clear(_ tree: Tree) throws {
        let index = try state(of: tree)
        let record = trees[index].record
        try modifying {
            access.modificationCount += 1
            try freeSubtree(record.root, level: 1, depth: record.depth)
        }
        var empty = TreeRecord()
        empty.created = record.created
        empty.lastModified = transactionID
        trees[index].record = empty
        trees[index].isDirty = true
    }

    // MARK: Writes

    /// Stores `value` under `key`. Returns true if an existing value was replaced.
    /// (Inlinable: the bytes are lent in the caller's module, specialized for its key and value
    /// types; unspecialized, the two generic `withBytes` calls cost ~300 instructions a put.)
    @discardableResult
    @inlinable
    public func put(_ key: some BytesConvertible, _ value: some BytesConvertible, in tree: Tree, mode: PutMode = .upsert) throws -> Bool {
        try key.withBytes { key in try value.withBytes { value in try putBytes(key, value, in: tree, mode: mode) } }
    }

    /// `put` of bytes lent for the call.
    @usableFromInline
    func putBytes(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, in tree: Tree, mode: PutMode) throws -> Bool {
        let index = try state(of: tree)
        var record = trees[index].record
        defer { trees[index].record = record }
        let replaced = try modifying { try insert(into: &record, key: key, value: value, mode: mode) }
        record.lastModified = transactionID
        trees[index].isDirty = true
        return replaced
    }

    /// Deletes `key`. Returns false if it was not there.
    @discardableResult
    public func delete(_ key: some BytesConvertible, in tree: Tree) throws -> Bool {
        let index = try state(of: tree)
        var record = trees[index].record
        defer { trees[index].record = record }
        let removed = try modifying { try key.withBytes { try remove(from: &record, key: $0) } }
        if removed {
            record.lastModified = transactionID
            trees[index].isDirty = true
        }
        return removed
    }

    /// Deletes the entries whose keys sort before `bound` (at most `limit`, the first ones);
    /// returns how many. Much cheaper than deleting them one by one (one descent per leaf): for
    /// trimming the old end of a log or a queue.
    @discardableResult
    public func deleteLeading(before bound: some BytesConvertible, in tree: Tree, limit: Int = .max) throws -> Int {
        let index = try state(of: tree)
        var record = trees[index].record
        defer { trees[index].record = record }
        let removed = try modifying { try bound.withBytes { try removeLeading(from: &record, below: $0, limit: limit) } }
        if removed > 0 {
            record.lastModified = transactionID
            trees[index].isDirty = true
        }
        return removed
    }

    /// Discards every change and lets the next writer in. Called automatically when the write
    /// block throws, and by deinit if neither `commit()` nor `abort()` was called. Inside a
    /// `nested` body it discards only that nested transaction's changes.
    public func abort() {
        guard isActive else { return }
        if !nestedFrames.isEmpty {
            abortInnermost()
            return
        }
        finish()
    }

    /// Ends the transaction after a commit or an abort: cursors stop working (their dirty pages
    /// are recycled), the buffers go back to the session's pool and the writer is released.
    func finish() {
        end()
        database.releaseWriter(session)
    }

    /// `finish` but for releasing the writer: for a transaction that failed to start, whose
    /// caller still holds the writer and releases it.
    func end() {
        isActive = false
        rememberCommittedCatalog()
        forgetLeafHints()
        access.endLease()
        access.dirty.drain { session.recycle($0) }
        session.keepDirtyTable(&access.dirty)
    }

    deinit {
        nestedFrames.removeAll()
        abort()
    }
}
