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
    var depth: Int
    var nestingDepth: Int
    var leaf: PageBuffer
    /// The leaf's page number when the hint was taken.
    var leafNumber: UInt64
    /// The branches from the root down to the leaf's parent, with the child index taken in each.
    /// (Replaced by swapping arrays, see `LeafHints.remember`.)
    var path: [WriteTransaction.PathEntry]
    /// Where the last key looked up in the leaf was (or would go), or the place right after the
    /// key the last put stored: a guess for the next one, checked against the keys around it
    /// before it is used. A put of the key a lookup just found (`valueForReplacing`, a unique
    /// index's check before its put) lands there, as does the next key of an ascending run of
    /// puts, and two compares replace the binary search.
    var lastIndex = 0

    /// The smallest key the leaf may hold (inclusive), or nil for the leftmost leaf.
    ///
    /// Mutating (it changes nothing) so that `LeafHints` calls it on its hint in place: a call on
    /// `hints[position]` from a non-mutating context copied the hint (retaining its leaf and path,
    /// releasing them after). The path is walked by position for the same reason.
    mutating func lowerBound() throws -> UnsafeRawBufferPointer? {
        var level = path.count - 1
        while level >= 0 {
            if path[level].index > 0 { return try path[level].buffer.page().branchKey(path[level].index) }
            level -= 1
        }
        return nil
    }

    /// The first key the leaf may not hold (the next leaf's separator), or nil for the rightmost.
    /// (Mutating for the reason `lowerBound()` is.)
    mutating func upperBound() throws -> UnsafeRawBufferPointer? {
        var level = path.count - 1
        while level >= 0 {
            if path[level].index + 1 < path[level].buffer.count { return try path[level].buffer.page().branchKey(path[level].index + 1) }
            level -= 1
        }
        return nil
    }
}

/// The leaf hints of one write transaction, one per tree (by root page), in the order their trees
/// were first hinted. A typed write touches a handful of trees (primary, indexes, change log, at
/// commit the free tree and the catalog); beyond `capacity` the hint of the tree hinted first
/// goes. (Writes visit their trees in a cycle, so least-recently-used eviction would miss just
/// as often; a transaction over more than `capacity` trees descends from the root for some.)
///
/// A descent's path array is recycled rather than freed: `remember` swaps it into the hint it
/// replaces and hands the replaced hint's array back, which `recycle` keeps for the next descent
/// (`takePath`). A put or lookup that descends then allocates and frees no array (a free of the
/// replaced path was ~240 instructions of every descending put).
struct LeafHints {
    static let capacity = 8
    /// Read in place by `hintedLeaf` (a copy of a hint would retain its leaf and path).
    private(set) var hints: [LeafHint] = []
    /// An empty path array with capacity, for the next descent.
    private var sparePath: [WriteTransaction.PathEntry] = []

    /// The position in `hints` of the hint for the tree whose root is `root`.
    @inline(__always)
    func position(root: UInt64) -> Int? {
        for position in hints.indices where hints[position].root == root { return position }
        return nil
    }

    /// Remembers the hint for `root`; `path` goes into it, and `path` is left empty, holding the
    /// array of the hint it replaced if any (to `recycle`).
    mutating func remember(root: UInt64, depth: Int, nestingDepth: Int, leaf: PageBuffer, path: inout [WriteTransaction.PathEntry],
                           index: Int) {
        if let position = position(root: root) {
            hints[position].depth = depth
            hints[position].nestingDepth = nestingDepth
            hints[position].leaf = leaf
            hints[position].leafNumber = leaf.number
            hints[position].lastIndex = index
            swap(&hints[position].path, &path)
            path.removeAll(keepingCapacity: true)
            return
        }
        if hints.count >= Self.capacity { hints.removeFirst() }
        hints.append(LeafHint(root: root, depth: depth, nestingDepth: nestingDepth, leaf: leaf, leafNumber: leaf.number, path: path,
                              lastIndex: index))
        path = []
    }

    /// `LeafHint.lowerBound()` of the hint at `position`, read in place (see there).
    @inline(__always)
    mutating func lowerBound(at position: Int) throws -> UnsafeRawBufferPointer? {
        try hints[position].lowerBound()
    }

    /// `LeafHint.upperBound()` of the hint at `position`, read in place (see `LeafHint.lowerBound()`).
    @inline(__always)
    mutating func upperBound(at position: Int) throws -> UnsafeRawBufferPointer? {
        try hints[position].upperBound()
    }

    /// Records where the last key looked up in the leaf of the hint at `position` was.
    @inline(__always)
    mutating func setLastIndex(_ index: Int, at position: Int) {
        hints[position].lastIndex = index
    }

    /// An empty path array for a descent (with the capacity of a recycled one when there is one).
    mutating func takePath() -> [WriteTransaction.PathEntry] {
        var path: [WriteTransaction.PathEntry] = []
        swap(&path, &sparePath)
        return path
    }

    /// Keeps `path` (emptied) for the next descent.
    mutating func recycle(_ path: inout [WriteTransaction.PathEntry]) {
        path.removeAll(keepingCapacity: true)
        if path.capacity > sparePath.capacity { swap(&path, &sparePath) }
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
    /// Takes `path` (which is left empty). `index`: the guess for the next key (`lastIndex`).
    @inline(__always)
    func rememberLeaf(_ leaf: PageBuffer, path: inout [PathEntry], record: TreeRecord, index: Int) {
        leafHints.remember(root: record.root, depth: record.depth, nestingDepth: nestingDepth, leaf: leaf, path: &path, index: index)
        leafHints.recycle(&path)
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
    /// `key` belongs to that leaf; nil sends the insert down from the root. `position`: the
    /// hint's place in `leafHints` (for `setLastIndex` after the put).
    func hintedLeaf(for record: TreeRecord, key: UnsafeRawBufferPointer) throws -> (leaf: PageBuffer, index: Int, exact: Bool, position: Int)? {
        // The hint is read in place (`leafHints.hints[position]`), not copied.
        guard let position = leafHints.position(root: record.root) else { return nil }
        let leaf = leafHints.hints[position].leaf
        let leafNumber = leafHints.hints[position].leafNumber
        guard leafHints.hints[position].depth == record.depth, leafHints.hints[position].nestingDepth == nestingDepth,
              leaf.nestingDepth == nestingDepth, leaf.number == leafNumber, access.dirty[leafNumber] === leaf else { return nil }
        let page = try leaf.page()
        guard page.isLeaf, page.count > 0 else { return nil }
        // Keys in order compare with the last key only.
        let last = page.count - 1
        let afterLast = compareKeys(key, try page.leafKey(last))
        if afterLast > 0 {
            if let upper = try leafHints.upperBound(at: position), compareKeys(key, upper) >= 0 { return nil }
            return (leaf, page.count, false, position)
        }
        if afterLast == 0 { return (leaf, last, true, position) }
        // Where the last lookup in this leaf was, if the key is there (or goes there).
        let guess = min(leafHints.hints[position].lastIndex, last)
        let atGuess = compareKeys(key, try page.leafKey(guess))
        if atGuess == 0 { return (leaf, guess, true, position) }
        if atGuess < 0, guess > 0, compareKeys(key, try page.leafKey(guess - 1)) > 0 { return (leaf, guess, false, position) }
        if compareKeys(key, try page.leafKey(0)) < 0 {
            if let lower = try leafHints.lowerBound(at: position), compareKeys(key, lower) < 0 { return nil }
            return (leaf, 0, false, position)
        }
        let (index, exact) = try page.search(key)
        leafHints.setLastIndex(index, at: position)
        return (leaf, index, exact, position)
    }
}
