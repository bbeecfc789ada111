/// A committed snapshot for the few lookups of one call, without tree handles or a
/// per-transaction tree table: what a single typed `load` needs. It borrows a pooled
/// `SnapshotReader`, so beginning one on a generation the reader has seen costs publishing the
/// generation in the reader's own slot: no allocation, no lock, no meta or catalog decoding.
///
/// Valid only inside the `Database.withSnapshot` call that made it: afterwards every method
/// throws `misuse`, and the views it handed out must not be used (as with `ReadTransaction.end()`).
public struct ReadSnapshot {
    /// The reader lent to the call; its state is the snapshot's generation while `lease` is current.
    let reader: SnapshotReader
    /// The reader's lease while the snapshot is valid; it moves on when `withSnapshot` returns.
    let lease: Int
    /// The committed generation this snapshot reads.
    public let generation: UInt64
    /// When `generation` was committed (ns since 1970, the writer's clock).
    public let commitTime: UInt64

    init(reader: SnapshotReader) {
        self.reader = reader
        lease = reader.access.lease
        generation = reader.generation
        commitTime = reader.commitTime
    }

    var access: PageAccess { reader.access }
    /// The catalog of the snapshot (valid while the snapshot is: check `checkActive()` first).
    var catalog: TreeRecord { reader.current.meta.catalog }

    func checkActive() throws {
        guard access.lease == lease else { throw StrataError.misuse("a ReadSnapshot was used after its withSnapshot call returned") }
    }

    /// The record of the tree called `name`, or nil if the snapshot has none.
    func record(ofTree name: String) throws -> TreeRecord? {
        try checkActive()
        return try reader.record(ofTree: name)
    }

    /// The value stored under `key` in the tree called `name`, without copying; nil if either is missing.
    @inlinable
    public func get(_ key: some BytesConvertible, inTree name: String) throws -> ByteView? {
        try key.withBytes { try get(bytes: $0, inTree: name) }
    }

    /// `get` for a key already in bytes: the non-generic body, so a call from another module pays
    /// no generic dispatch.
    @usableFromInline
    func get(bytes key: UnsafeRawBufferPointer, inTree name: String) throws -> ByteView? {
        guard let record = try record(ofTree: name) else { return nil }
        return try access.lookup(in: record, key: key)
    }

    /// The first entry of the tree called `name` whose key is at or after `key` (nil if there is
    /// none, or no such tree), without copying: a seek that costs about one `get`, for "the entry
    /// with this prefix, if any" (check that the key returned starts with it).
    public func firstEntry(atOrAfter key: some BytesConvertible, inTree name: String) throws -> (key: ByteView, value: ByteView)? {
        guard let record = try record(ofTree: name) else { return nil }
        return try key.withBytes { try access.firstEntry(in: record, atOrAfter: $0) }
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
    /// opening tree handles. Throws `closed` after `close()`, `readerTableFull` if no reader slot
    /// is free, and what `body` throws.
    @inlinable
    public func withSnapshot<Result>(_ body: (ReadSnapshot) throws -> Result) throws -> Result {
        // Inlined into the caller, so `body` is called directly; the begin and end are not generic.
        let snapshot = try beginSnapshot()
        defer { endSnapshot(snapshot) }
        return try body(snapshot)
    }

    /// Begins the snapshot of a `withSnapshot` call on a pooled reader (a new one if none is idle).
    @usableFromInline
    func beginSnapshot() throws -> ReadSnapshot {
        try checkOpen()
        var slot: Int?
        let reader = try idleSnapshots.takeReserving(slot: &slot) ?? SnapshotReader(database: self)
        reader.poolSlot = slot
        do {
            try reader.begin(self)
            return ReadSnapshot(reader: reader)
        } catch {
            let slot = reader.poolSlot
            idleSnapshots.park(reader, returningTo: slot) // not registered: `begin` undid what it did
            throw error
        }
    }

    /// Ends the snapshot of a `withSnapshot` call and parks its reader for the next call.
    /// Consumes the snapshot: its reference to the reader is the one handed to the pool, instead
    /// of a new one retained for the pool and the snapshot's released after.
    @usableFromInline
    func endSnapshot(_ snapshot: consuming ReadSnapshot) {
        let reader = snapshot.reader
        _ = consume snapshot
        reader.end(self)
        // After `close()` the pool was drained: a reader parked now would keep its slot until deinit.
        // The check races `close()`: a close that runs between it and the park drains the pool
        // first (a reserved slot is skipped), so this reader parks after the drain. Harmless, and
        // not closed here (that would take a sequentially consistent store and load on both
        // sides, the cost the plain store saves): the reader's reader-table slot is in use
        // locally, which `close()` does not release (`releaseOwnedSlots(onlyIdle: true)`); it
        // reads as idle (snapshot 0, `end` ran above), so it holds back no page; new snapshots
        // are refused (`beginSnapshot` checks `closed` first); and the handle's deinit drains the
        // pool before it gives its slots back. The cost: one idle slot held from `close()` until
        // the handle is deallocated.
        let slot = reader.poolSlot // read first: `park` consumes the reference
        if !isClosed {
            idleSnapshots.park(reader, returningTo: slot)
        } else if let slot {
            idleSnapshots.cancelReservation(slot)
        }
    }
}
