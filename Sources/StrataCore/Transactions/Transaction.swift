import Synchronization

/// A named tree opened in one transaction. Handles are cheap values; using one in a transaction other
/// than the one that opened it is a `StrataError.misuse`.
public struct Tree: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    let index: Int
    let transactionSerial: UInt64
    public var description: String { name }
}

/// What every transaction can do: read one consistent snapshot.
///
/// `ReadTransaction` reads a committed generation; `WriteTransaction` reads the committed state plus
/// its own uncommitted changes. A transaction is used by one thread at a time.
public class Transaction {
    /// The store this transaction reads.
    public var database: Database { owner! }
    /// Strong while the transaction can be used; nil only while an idle read transaction is
    /// parked in its handle's `IdlePool` (which must not keep the handle alive).
    @exclusivity(unchecked) var owner: Database?
    let access: PageAccess
    /// The catalog tree: tree name -> `TreeRecord`.
    var catalog: TreeRecord
    /// Trees opened in this transaction. A transaction touches a handful, so a linear search beats
    /// hashing the name. No runtime exclusivity check (every put reads and writes it): only the
    /// thread using the transaction touches it, and no access to it overlaps another.
    @exclusivity(unchecked) var trees: [TreeState] = []
    /// Identifies this transaction (or this life of a reused read transaction) in its `Tree` handles.
    @exclusivity(unchecked) var serial: UInt64
    /// The committed generation this transaction started from.
    @exclusivity(unchecked) public internal(set) var generation: UInt64
    @exclusivity(unchecked) var isActive = true

    private static let serials = Atomic<UInt64>(1)

    struct TreeState {
        let name: String
        var record: TreeRecord
        /// Created, modified or dropped in this (write) transaction: the catalog needs updating.
        var isDirty = false
        var isDropped = false
    }

    init(database: Database, access: PageAccess, catalog: TreeRecord, generation: UInt64) {
        owner = database
        self.access = access
        self.catalog = catalog
        self.generation = generation
        serial = Transaction.nextSerial()
    }

    static func nextSerial() -> UInt64 { serials.add(1, ordering: .relaxed).newValue }

    func checkActive() throws {
        guard isActive else { throw StrataError.closed(what: "transaction") }
    }

    /// (Inlined: every put and lookup starts here; the errors are built out of line.)
    @inline(__always)
    func state(of tree: Tree) throws -> Int {
        // The name check catches a handle whose tree a rolled-back nested transaction opened.
        guard isActive, tree.transactionSerial == serial, tree.index < trees.count, TreeName.same(trees[tree.index].name, tree.name),
              !trees[tree.index].isDropped else { throw refusal(of: tree) }
        return tree.index
    }

    /// Why `state(of:)` refuses `tree`.
    @inline(never)
    private func refusal(of tree: Tree) -> StrataError {
        guard isActive else { return StrataError.closed(what: "transaction") }
        guard tree.transactionSerial == serial, tree.index < trees.count, TreeName.same(trees[tree.index].name, tree.name) else {
            return StrataError.misuse("tree handle '\(tree.name)' belongs to another transaction; open it again in this one")
        }
        return StrataError.treeNotFound(name: tree.name)
    }

    // MARK: Trees

    /// Whether `tree` can still be used in this transaction: it was opened here, it is not
    /// dropped, and no rolled-back nested transaction took it away. Layers that keep handles
    /// across calls check this before reusing one, and open the tree again if it fails.
    public func isOpen(_ tree: Tree) -> Bool {
        isActive && tree.transactionSerial == serial && tree.index < trees.count
            && !trees[tree.index].isDropped && TreeName.same(trees[tree.index].name, tree.name)
    }

    /// Opens the tree called `name`, or nil if it does not exist in this snapshot.
    public func treeIfPresent(_ name: String) throws -> Tree? {
        try checkActive()
        if let index = openedTreeIndex(name) {
            return trees[index].isDropped ? nil : Tree(name: name, index: index, transactionSerial: serial)
        }
        guard let record = try catalogRecord(named: name) else { return nil }
        return register(TreeState(name: name, record: record))
    }

    /// The validated catalog entry `name`. A read transaction's catalog is its generation's, so
    /// the lookup is shared with the other read transactions of that generation (`SnapshotCache`);
    /// a write transaction's comes from its writer session's memory (`WriterCatalogMemory`).
    private func catalogRecord(named name: String) throws -> TreeRecord? {
        // Only a write transaction has a writable access.
        guard !access.isWritable else { return try unsafeDowncast(self, to: WriteTransaction.self).committedCatalogRecord(named: name) }
        return try database.snapshots.tree(named: name, generation: generation, catalog: catalog, access: access)
    }

    /// Opens the tree called `name`; throws `treeNotFound` if there is none.
    public func tree(_ name: String) throws -> Tree {
        guard let tree = try treeIfPresent(name) else { throw StrataError.treeNotFound(name: name) }
        return tree
    }

    func openedTreeIndex(_ name: String) -> Int? {
        // Newest first: a tree dropped and re-created in one transaction has a newer state.
        trees.lastIndex { TreeName.same($0.name, name) }
    }

    func register(_ state: TreeState) -> Tree {
        let index = trees.count
        trees.append(state)
        return Tree(name: state.name, index: index, transactionSerial: serial)
    }

    /// Names of every tree in this snapshot, in byte order.
    public func treeNames() throws -> [String] {
        try checkActive()
        var names: [String] = []
        let cursor = Cursor(access: access, record: catalog)
        var more = try cursor.first()
        while more {
            names.append(String(decoding: try cursor.key().buffer, as: UTF8.self))
            more = try cursor.next()
        }
        // Trees created or dropped by this (write) transaction are already in the catalog copy,
        // except those whose catalog update waits for commit. By bytes (`TreeName`).
        for state in trees where state.isDirty {
            if state.isDropped {
                names.removeAll { TreeName.same($0, state.name) }
            } else if !names.contains(where: { TreeName.same($0, state.name) }) {
                names.append(state.name)
            }
        }
        return names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
    }

    /// Statistics of a tree in this snapshot (root, entries, pages, depth, last modification).
    public func record(of tree: Tree) throws -> TreeRecord { trees[try state(of: tree)].record }

    /// Number of entries in the tree.
    public func count(_ tree: Tree) throws -> Int { Int(clamping: trees[try state(of: tree)].record.entries) }

    // MARK: Reads

    /// The value stored under `key`, without copying, or nil.
    public func get(_ key: some BytesConvertible, in tree: Tree) throws -> ByteView? {
        let record = trees[try state(of: tree)].record
        return try key.withBytes { try lookup(in: record, key: $0) }
    }

    /// The values stored under each of `keys` (nil where absent), in order. Faster than one `get`
    /// per key for many keys: the lookups advance level by level so their cache misses overlap.
    public func get(_ keys: [ByteView], in tree: Tree) throws -> [ByteView?] {
        try access.lookup(in: trees[try state(of: tree)].record, keys: keys)
    }

    public func contains(_ key: some BytesConvertible, in tree: Tree) throws -> Bool {
        try get(key, in: tree) != nil
    }

    /// A cursor over the tree, not yet positioned. In a write transaction, positioning it again
    /// after a modification starts from the tree as it is then (see `Cursor`).
    public func cursor(_ tree: Tree) throws -> Cursor {
        Cursor(access: access, record: trees[try state(of: tree)].record, of: tree, in: self)
    }

    /// Calls `body` for each entry with `lower <= key < upper` (bounds optional; the upper one
    /// inclusive when asked), in ascending or descending key order, until it returns false. Keys
    /// and values are zero-copy views (see `ByteView`).
    public func scan(_ tree: Tree, from lower: [UInt8]? = nil, to upper: [UInt8]? = nil, upperInclusive: Bool = false,
                     reverse: Bool = false, _ body: (ByteView, ByteView) throws -> Bool) throws {
        let scan = TreeScan(access: access, record: trees[try state(of: tree)].record, lower: lower, upper: upper,
                            upperInclusive: upperInclusive)
        if reverse { try scan.backward(body) } else { try scan.forward(body) }
    }

    /// Calls `body` with the first key at or after `key` (nil if there is none), valid only
    /// during the call. One descent and no cursor unless that key starts the next leaf: the
    /// cheap way to ask "is any key with this prefix stored?" (unique-index checks).
    public func withFirstKey<Result>(atOrAfter key: some BytesConvertible, in tree: Tree,
                                     _ body: (UnsafeRawBufferPointer?) throws -> Result) throws -> Result {
        let record = trees[try state(of: tree)].record
        return try key.withBytes { key in
            guard record.root != 0 else { return try body(nil) }
            let (leaf, index, _) = try access.descend(from: record.root, level: 1, depth: record.depth, towards: .key(key))
            if index < leaf.count { return try body(try leaf.leafKey(index)) }
            // Past the end of the leaf: the answer starts the next one, which a cursor walks to.
            let cursor = Cursor(access: access, record: record)
            guard try cursor.seek(bytes: key) else { return try body(nil) }
            return try body(try cursor.currentKeyBytes())
        }
    }

    /// The first entry of `tree` whose key is at or after `key` (nil if there is none), valid while
    /// the transaction is: one descent, no cursor unless that entry starts the next leaf.
    public func firstEntry(atOrAfter key: some BytesConvertible, in tree: Tree) throws -> (key: ByteView, value: ByteView)? {
        let record = trees[try state(of: tree)].record
        return try key.withBytes { try access.firstEntry(in: record, atOrAfter: $0) }
    }

    /// Point lookup without a cursor (see `PageAccess.lookup`).
    func lookup(in record: TreeRecord, key: UnsafeRawBufferPointer) throws -> ByteView? {
        try access.lookup(in: record, key: key)
    }
}
