/// Range scans without a `Cursor` object: the path lives in a local array and each leaf is walked
/// with plain index arithmetic, so a full scan costs a few bounds checks per entry. The same
/// invariants as the cursor are enforced (every leaf at the tree's depth, no empty leaf).
struct TreeScan {
    let access: PageAccess
    let record: TreeRecord
    /// Inclusive lower bound (forward scans start here).
    let lower: [UInt8]?
    /// Upper bound, exclusive unless `upperInclusive`.
    let upper: [UInt8]?
    let upperInclusive: Bool

    /// Descends to the leaf holding `key` (or the first/last leaf when nil), filling `path` with
    /// branch positions. Returns the leaf and the index to start at.
    private func descend(to key: [UInt8]?, last: Bool, path: inout [(page: Page, index: Int)]) throws -> (Page, Int) {
        if let key {
            let found = try key.withUnsafeBytes { bytes in
                try access.descend(from: record.root, level: 1, depth: record.depth, towards: .key(bytes), passing: { path.append(($0, $1)) })
            }
            return (found.leaf, found.index)
        }
        let found = try access.descend(from: record.root, level: 1, depth: record.depth, towards: last ? .last : .first,
                                       passing: { path.append(($0, $1)) })
        return (found.leaf, found.index)
    }

    /// The next (or previous) leaf after the one `path` leads to, or nil at the end.
    private func step(_ path: inout [(page: Page, index: Int)], forward: Bool) throws -> Page? {
        var level = path.count - 1
        while level >= 0 {
            let next = path[level].index + (forward ? 1 : -1)
            if next >= 0 && next < path[level].page.count {
                path[level].index = next
                path.removeSubrange((level + 1)...)
                // `path[level]` is at tree level `level + 1`; its child one below.
                return try access.descend(from: try path[level].page.child(next), level: level + 2, depth: record.depth,
                                          towards: forward ? .first : .last, passing: { path.append(($0, $1)) }).leaf
            }
            level -= 1
        }
        return nil
    }

    /// (Inlined: a full scan has no upper bound, and the call per entry was ~5% of it.)
    @inline(__always)
    private func beyondUpper(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return false }
        let c = upper.withUnsafeBytes { compareKeys(key, $0) }
        return c > 0 || (c == 0 && !upperInclusive)
    }

    private func belowLower(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let lower else { return false }
        return lower.withUnsafeBytes { compareKeys(key, $0) } < 0
    }

    /// The scan holds raw page views along its path: a modification of the transaction (from the
    /// body) may move or free those pages, so it ends the scan with an error instead.
    private func checkUnmodified(_ stamp: Int) throws {
        guard access.modificationCount == stamp else {
            throw StrataError.misuse("the store was modified during a scan of the same transaction; collect the keys first, then modify")
        }
    }

    func forward(_ body: (ByteView, ByteView) throws -> Bool) throws {
        var owner: AnyObject = access.mapping
        try forwardNodes(enteringLeaf: { owner = access.owner(of: $0.number) }) { node in
            try body(ByteView(node.key, owner: owner), try access.value(of: node, owner: owner))
        }
    }

    func backward(_ body: (ByteView, ByteView) throws -> Bool) throws {
        var owner: AnyObject = access.mapping
        try backwardNodes(enteringLeaf: { owner = access.owner(of: $0.number) }) { node in
            try body(ByteView(node.key, owner: owner), try access.value(of: node, owner: owner))
        }
    }

    /// The leaf nodes in range in ascending key order, until `visit` returns false;
    /// `enteringLeaf` is called with each leaf before its first node is visited. The nodes point
    /// into pages of the transaction: valid while it is not modified (checked after each visit).
    @inline(__always)
    func forwardNodes(enteringLeaf: (Page) -> Void, _ visit: (Page.LeafNode) throws -> Bool) throws {
        guard record.root != 0 else { return }
        let stamp = access.modificationCount
        var path: [(page: Page, index: Int)] = []
        path.reserveCapacity(record.depth)
        var (leaf, index) = try descend(to: lower, last: false, path: &path)
        while true {
            enteringLeaf(leaf)
            while index < leaf.count {
                let node = try leaf.leaf(index)
                if beyondUpper(node.key) { return }
                guard try visit(node) else { return }
                try checkUnmodified(stamp)
                index += 1
            }
            guard let next = try step(&path, forward: true) else { return }
            leaf = next
            index = 0
        }
    }

    /// `forwardNodes` in descending key order.
    @inline(__always)
    func backwardNodes(enteringLeaf: (Page) -> Void, _ visit: (Page.LeafNode) throws -> Bool) throws {
        guard record.root != 0 else { return }
        let stamp = access.modificationCount
        var path: [(page: Page, index: Int)] = []
        path.reserveCapacity(record.depth)
        var (leaf, index) = try descend(to: upper, last: upper == nil, path: &path)
        if upper != nil, index >= leaf.count { index = leaf.count - 1 }
        while true {
            enteringLeaf(leaf)
            while index >= 0 {
                let node = try leaf.leaf(index)
                if !beyondUpper(node.key) {
                    if belowLower(node.key) { return }
                    guard try visit(node) else { return }
                    try checkUnmodified(stamp)
                }
                index -= 1
            }
            guard let previous = try step(&path, forward: false) else { return }
            leaf = previous
            index = previous.count - 1
        }
    }
}
