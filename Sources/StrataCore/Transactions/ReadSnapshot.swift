/// A committed snapshot for the few lookups of one call, without a transaction object: no tree
/// handles, no per-transaction tree table. It is what a single typed `load` needs; beginning one
/// costs a reader-slot claim and, for a generation already seen, no meta or catalog decoding
/// (see `SnapshotCache`).
///
/// Valid only inside the `Database.withSnapshot` call that made it: afterwards every method
/// throws `misuse`, and the views it handed out must not be used (as with `ReadTransaction.end()`).
public struct ReadSnapshot {
    let database: Database
    let access: PageAccess
    let catalog: TreeRecord
    /// The committed generation this snapshot reads.
    public let generation: UInt64
    /// When `generation` was committed (ns since 1970, the writer's clock).
    public let commitTime: UInt64

    /// `PageAccess.modificationCount` is bumped when the snapshot ends (it is never modified).
    func checkActive() throws {
        guard access.modificationCount == 0 else { throw StrataError.misuse("a ReadSnapshot was used after its withSnapshot call returned") }
    }

    /// The record of the tree called `name`, or nil if the snapshot has none.
    func record(ofTree name: String) throws -> TreeRecord? {
        try checkActive()
        if let cached = database.snapshots.tree(named: name, generation: generation) { return cached.record }
        let record = try access.catalogEntry(named: name, in: catalog)
        database.snapshots.remember(tree: record, named: name, generation: generation)
        return record
    }

    /// The value stored under `key` in the tree called `name`, without copying; nil if either is missing.
    public func get(_ key: some BytesConvertible, inTree name: String) throws -> ByteView? {
        guard let record = try record(ofTree: name) else { return nil }
        return try key.withBytes { try access.lookup(in: record, key: $0) }
    }

    /// Calls `body` for each entry of the tree called `name` with `lower <= key < upper` (bounds
    /// optional), in ascending or descending order, until it returns false. A missing tree is empty.
    public func scan(inTree name: String, from lower: [UInt8]? = nil, to upper: [UInt8]? = nil, reverse: Bool = false,
                     _ body: (ByteView, ByteView) throws -> Bool) throws {
        guard let record = try record(ofTree: name) else { return }
        let scan = TreeScan(access: access, record: record, lower: lower, upper: upper, upperInclusive: false)
        if reverse { try scan.backward(body) } else { try scan.forward(body) }
    }
}

extension Database {
    /// Runs `body` on the latest committed generation, like `read`, but without creating a
    /// `ReadTransaction`: for a few point lookups or one scan, where the transaction's setup
    /// would cost more than the reads.
    public func withSnapshot<Result>(_ body: (ReadSnapshot) throws -> Result) throws -> Result {
        try checkOpen()
        let (claim, meta) = try claimSnapshot()
        defer { releaseSnapshot(claim) }
        let base = try mapping.base(covering: Int(meta.pageCount) * pageSize)
        let access = PageAccess(pageSize: pageSize, base: base, committedPageCount: meta.pageCount, mapping: mapping, isWritable: false,
                                verifiesChecksums: options.verifyChecksums, newestTransaction: newestReadableTransaction(claim, meta: meta))
        defer { access.modificationCount += 1 }
        return try body(ReadSnapshot(database: self, access: access, catalog: meta.catalog, generation: meta.transactionID,
                                     commitTime: meta.commitTime))
    }
}
