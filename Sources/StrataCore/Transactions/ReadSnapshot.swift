/// A committed snapshot for the few lookups of one call, without tree handles or a
/// per-transaction tree table: what a single typed `load` needs. It borrows the page access of a
/// pooled read transaction (see `ReadTransactionPool`), so beginning one costs a reader-slot claim
/// and, for a generation already seen, no meta or catalog decoding (see `SnapshotCache`).
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
    /// The access's lease while the snapshot is valid; it moves on when `withSnapshot` returns.
    let lease: Int

    func checkActive() throws {
        guard access.lease == lease else { throw StrataError.misuse("a ReadSnapshot was used after its withSnapshot call returned") }
    }

    /// The record of the tree called `name`, or nil if the snapshot has none.
    func record(ofTree name: String) throws -> TreeRecord? {
        try checkActive()
        return try database.snapshots.tree(named: name, generation: generation, catalog: catalog, access: access)
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
    /// Runs `body` on the latest committed generation, like `read`, but with a `ReadSnapshot`
    /// instead of a `ReadTransaction`: for a few point lookups or one scan by tree name, without
    /// opening tree handles.
    public func withSnapshot<Result>(_ body: (ReadSnapshot) throws -> Result) throws -> Result {
        // A pooled read transaction lends its access; no transaction object is created.
        var transaction = try beginRead()
        defer { endAndRecycle(&transaction) }
        let access = transaction.access
        return try body(ReadSnapshot(database: self, access: access, catalog: transaction.catalog, generation: transaction.generation,
                                     commitTime: transaction.commitTime, lease: access.lease))
    }
}
