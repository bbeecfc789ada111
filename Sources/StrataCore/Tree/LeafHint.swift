/// The leaf the last insert into a tree went into, so that the next insert into that tree whose
/// key falls in that leaf's key range goes straight there instead of descending from the root.
/// A transaction keeps one hint per tree it inserts into (up to `LeafHints.capacity`, see there):
/// a typed write puts into a primary tree, index trees and a change log in turn, and a single
/// hint for the whole transaction would be replaced by every put before the next one into the
/// same tree could use it.
///
/// Keys that arrive in order (fills, logs, time series), in reverse order or clustered spend most
/// of a put on the descent: a search and a dirty-table lookup per level, for a path this
/// transaction has already copied. The path from the root to the hinted leaf is already owned by
/// this transaction (dirty, at the current nesting level), so an insert that fits into the leaf
/// changes nothing on it: no page to copy, no child pointer to update.
///
/// A key belongs to the hinted leaf when it lies between the leaf's first and last keys, or
/// beyond them but inside the leaf's range: at or after the separator its parent path holds on
/// the left (no bound for the leftmost leaf), before the separator on the right (no bound for the
/// rightmost leaf). The bounds are read from the path's branch buffers when needed.
///
/// Invariant: a hint names buffers in the dirty table at level `nestingDepth`, whose keys and
/// separators are what they were when it was taken, apart from leaf entries added since. Anything
/// that could break that forgets it: a split or a delete in its tree (separators move, merges
/// free pages) forgets that tree's hint (`forgetLeafHint(root:)`: the hint of the tree whose root
/// is that page); a freed subtree, a leading-range delete, the start or end of a nested level
/// (buffers are shadowed, merged or rolled back) and the end of the transaction (buffers are
/// recycled) forget every hint (`forgetLeafHints`). Operations on one tree change only that
/// tree's pages, so another tree's hint stays true. Inserts that fit in place keep the hint:
/// they add leaf entries and touch no separator. The checks in
/// `hintedLeaf` (same root and depth, same level, the buffer still installed under the number it
/// had when the hint was taken) are a second fence, not the rule: a recycled buffer is renumbered
/// when it is reused, so comparing the number taken then catches a hint that outlived its buffer.
struct LeafHint {
    /// The tree's root and depth when the hint was taken (they name the tree: roots are distinct
    /// pages, and a root changes only by a split or a delete, which forget the hint).
    let root: UInt64
    let depth: Int
    let nestingDepth: Int
    let leaf: PageBuffer
    /// The leaf's page number when the hint was taken.
    let leafNumber: UInt64
    /// The branches from the root down to the leaf's parent, with the child index taken in each.
    let path: [WriteTransaction.PathEntry]

    /// The smallest key the leaf may hold (inclusive), or nil for the leftmost leaf.
    func lowerBound() throws -> UnsafeRawBufferPointer? {
        for entry in path.reversed() where entry.index > 0 {
            return try entry.buffer.page().branchKey(entry.index)
        }
        return nil
    }

    /// The first key the leaf may not hold (the next leaf's separator), or nil for the rightmost.
    func upperBound() throws -> UnsafeRawBufferPointer? {
        for entry in path.reversed() where entry.index + 1 < entry.buffer.count {
            return try entry.buffer.page().branchKey(entry.index + 1)
        }
        return nil
    }
}

/// The leaf hints of one write transaction, one per tree (by root page), in the order their trees
/// were first hinted. A typed write touches a handful of trees (primary, indexes, change log, at
/// commit the free tree and the catalog); beyond `capacity` the hint of the tree hinted first
/// goes. (Writes visit their trees in a cycle, so least-recently-used eviction would miss just
/// as often; a transaction over more than `capacity` trees descends from the root for some.)
struct LeafHints {
    static let capacity = 8
    private var hints: [LeafHint] = []

    /// The hint for the tree whose root is `root`.
    @inline(__always)
    func hint(root: UInt64) -> LeafHint? {
        for hint in hints where hint.root == root { return hint }
        return nil
    }

    mutating func remember(_ hint: LeafHint) {
        if let index = hints.firstIndex(where: { $0.root == hint.root }) {
            hints[index] = hint
            return
        }
        if hints.count >= Self.capacity { hints.removeFirst() }
        hints.append(hint)
    }

    mutating func forget(root: UInt64) {
        hints.removeAll { $0.root == root }
    }

    mutating func forgetAll() {
        if !hints.isEmpty { hints.removeAll(keepingCapacity: true) }
    }
}

extension WriteTransaction {
    /// Remembers `leaf`, reached through `path` in the tree `record`, for the next insert into it.
    @inline(__always)
    func rememberLeaf(_ leaf: PageBuffer, path: [PathEntry], record: TreeRecord) {
        leafHints.remember(LeafHint(root: record.root, depth: record.depth, nestingDepth: nestingDepth, leaf: leaf,
                                    leafNumber: leaf.number, path: path))
    }

    /// Forgets the hint of the tree whose root is `root` (before a split or a delete in it).
    @inline(__always)
    func forgetLeafHint(root: UInt64) {
        leafHints.forget(root: root)
    }

    /// Forgets every hinted leaf (see `LeafHint` for when this is required).
    @inline(__always)
    func forgetLeafHints() {
        leafHints.forgetAll()
    }

    /// The hinted leaf and the position of `key` in it, if the hint is for the tree `record` and
    /// `key` belongs to that leaf; nil sends the insert down from the root.
    func hintedLeaf(for record: TreeRecord, key: UnsafeRawBufferPointer) throws -> (leaf: PageBuffer, index: Int, exact: Bool)? {
        guard let hint = leafHints.hint(root: record.root), hint.depth == record.depth,
              hint.nestingDepth == nestingDepth, hint.leaf.nestingDepth == hint.nestingDepth,
              hint.leaf.number == hint.leafNumber, access.dirty[hint.leafNumber] === hint.leaf else { return nil }
        let page = try hint.leaf.page()
        guard page.isLeaf, page.count > 0 else { return nil }
        // Keys in order compare with the last key only.
        let last = page.count - 1
        let afterLast = compareKeys(key, try page.leafKey(last))
        if afterLast > 0 {
            if let upper = try hint.upperBound(), compareKeys(key, upper) >= 0 { return nil }
            return (hint.leaf, page.count, false)
        }
        if afterLast == 0 { return (hint.leaf, last, true) }
        if compareKeys(key, try page.leafKey(0)) < 0 {
            if let lower = try hint.lowerBound(), compareKeys(key, lower) < 0 { return nil }
            return (hint.leaf, 0, false)
        }
        let (index, exact) = try page.search(key)
        return (hint.leaf, index, exact)
    }
}
