/// A position in one tree of one transaction, moving in key order in either direction.
///
/// The cursor keeps the path from the root to its leaf. In a write transaction, any modification
/// invalidates that path (pages may have moved): moving the cursor (`next`, `previous`) or reading
/// its key or value afterwards throws `StrataError.misuse` rather than reading stale memory.
/// Positioning it again (`first`, `last`, `seek`, `seekLast`) starts afresh from the tree as the
/// transaction holds it now; it throws `treeNotFound` if the tree was dropped or renamed
/// meanwhile. A nested transaction that rolls back ends every cursor made before it
/// (`StrataError.misuse`: the pages they could name were put back); make a new one.
public final class Cursor {
    private let access: PageAccess
    /// The tree's root and depth when the path was last positioned from them.
    private var root: UInt64
    private var depth: Int
    /// Where a repositioning after a modification reads the tree's current record: nil for the
    /// engine's own one-shot cursors over a record (they are never repositioned after one).
    /// Weak: a cursor kept around must not keep its transaction (and the writer lock) alive.
    private weak var transaction: Transaction?
    private let tree: Tree?
    private var path: [(page: Page, index: Int)] = []
    private var modificationStamp: Int
    /// The access's lease when the cursor was made: positioning is refused once it moved on.
    private let lease: Int
    private var positioned = false

    init(access: PageAccess, record: TreeRecord, of tree: Tree? = nil, in transaction: Transaction? = nil) {
        self.access = access
        root = record.root
        depth = record.depth
        self.tree = tree
        self.transaction = transaction
        modificationStamp = access.modificationCount
        lease = access.lease
        path.reserveCapacity(max(1, record.depth))
    }

    /// Whether the cursor is on an entry (false before positioning and after running off an end).
    public var isPositioned: Bool { positioned }

    private func checkStable() throws {
        guard modificationStamp == access.modificationCount else {
            throw StrataError.misuse("a cursor was used after its transaction modified the store or ended; create a new cursor")
        }
    }

    /// Starts a new positioning, only within the transaction the cursor was made in. After a
    /// modification the tree's record is read again (its root may have been copied, split or
    /// freed and handed to another tree) and the modification stamp is taken afresh.
    private func reset() throws {
        guard lease == access.lease else {
            throw StrataError.misuse("a cursor was used after its transaction ended; create a new cursor in a live transaction")
        }
        if modificationStamp != access.modificationCount {
            guard let transaction, let tree else {
                throw StrataError.misuse("a cursor over a tree record was positioned again after a modification")
            }
            let record = try transaction.record(of: tree)
            root = record.root
            depth = record.depth
        }
        path.removeAll(keepingCapacity: true)
        positioned = false
        modificationStamp = access.modificationCount
    }

    /// Descends from `number` (the child of the last page on the path) to a leaf, always taking
    /// the first (or last) child, and ends the path at that leaf's first (or last) entry.
    private func descend(from number: UInt64, towardsEnd: Bool) throws {
        let found = try access.descend(from: number, level: path.count + 1, depth: depth, towards: towardsEnd ? .last : .first,
                                       passing: { path.append(($0, $1)) })
        path.append((found.leaf, found.index))
    }

    @discardableResult
    public func first() throws -> Bool {
        try reset()
        guard root != 0 else { return false }
        try descend(from: root, towardsEnd: false)
        positioned = true
        return true
    }

    @discardableResult
    public func last() throws -> Bool {
        try reset()
        guard root != 0 else { return false }
        try descend(from: root, towardsEnd: true)
        positioned = true
        return true
    }

    /// Positions at the first entry whose key is >= `key`.
    @discardableResult
    public func seek(_ key: some BytesConvertible) throws -> Bool {
        try key.withBytes { try seek(bytes: $0) }
    }

    func seek(bytes key: UnsafeRawBufferPointer) throws -> Bool {
        try reset()
        guard root != 0 else { return false }
        let found = try access.descend(from: root, level: 1, depth: depth, towards: .key(key), passing: { path.append(($0, $1)) })
        path.append((found.leaf, found.index))
        if path[path.count - 1].index >= path[path.count - 1].page.count {
            // Past the end of this leaf: the answer is the first entry of the next leaf.
            positioned = true
            path[path.count - 1].index = path[path.count - 1].page.count - 1
            return try next()
        }
        positioned = true
        return true
    }

    /// Moves to the next entry; false (and unpositioned) at the end.
    @discardableResult
    public func next() throws -> Bool {
        try checkStable()
        guard positioned else { return false }
        var level = path.count - 1
        if path[level].index + 1 < path[level].page.count {
            path[level].index += 1
            return true
        }
        // Climb to the first ancestor with a next child, then take leftmost children down.
        while level > 0 {
            level -= 1
            if path[level].index + 1 < path[level].page.count {
                path[level].index += 1
                path.removeSubrange((level + 1)...)
                try descend(from: try path[level].page.child(path[level].index), towardsEnd: false)
                return true
            }
        }
        positioned = false
        return false
    }

    /// Moves to the previous entry; false (and unpositioned) at the start.
    @discardableResult
    public func previous() throws -> Bool {
        try checkStable()
        guard positioned else { return false }
        var level = path.count - 1
        if path[level].index > 0 {
            path[level].index -= 1
            return true
        }
        while level > 0 {
            level -= 1
            if path[level].index > 0 {
                path[level].index -= 1
                path.removeSubrange((level + 1)...)
                try descend(from: try path[level].page.child(path[level].index), towardsEnd: true)
                return true
            }
        }
        positioned = false
        return false
    }

    /// Positions at the last entry whose key is <= `key`.
    @discardableResult
    public func seekLast(atOrBefore key: some BytesConvertible) throws -> Bool {
        try key.withBytes { bytes in
            if try seek(bytes: bytes) {
                if compareKeys(try currentKeyBytes(), bytes) == 0 { return true }
                return try previous()
            }
            return try last()
        }
    }

    func currentKeyBytes() throws -> UnsafeRawBufferPointer {
        try checkStable()
        guard positioned else { throw StrataError.misuse("the cursor is not positioned on an entry") }
        let (page, index) = path[path.count - 1]
        return try page.leafKey(index)
    }

    /// The current key, without copying.
    public func key() throws -> ByteView {
        let page = path.last?.page
        return ByteView(try currentKeyBytes(), owner: page.map { access.owner(of: $0.number) })
    }

    /// The current value, without copying.
    public func value() throws -> ByteView {
        try checkStable()
        guard positioned else { throw StrataError.misuse("the cursor is not positioned on an entry") }
        let (page, index) = path[path.count - 1]
        return try access.value(of: try page.leaf(index), in: page)
    }
}
