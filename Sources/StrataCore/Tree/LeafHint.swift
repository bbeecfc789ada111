/// The leaf the last insert of a write transaction went into, so that the next insert whose key
/// falls in that leaf's key range goes straight there instead of descending from the root.
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
/// Invariant: the hint names buffers in the dirty table at level `nestingDepth`, whose keys and
/// separators are what they were when it was taken, apart from leaf entries added since. Anything
/// that could break that forgets the hint (`forgetLeafHint`): a split (separators move), any
/// delete or freed subtree (merges, freed pages), the start or end of a nested level (buffers are
/// shadowed, merged or rolled back), the end of the transaction (buffers are recycled). Inserts
/// that fit in place keep it: they add leaf entries and touch no separator. The checks in
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

extension WriteTransaction {
    /// Remembers `leaf`, reached through `path` in the tree `record`, for the next insert.
    @inline(__always)
    func rememberLeaf(_ leaf: PageBuffer, path: [PathEntry], record: TreeRecord) {
        leafHint = LeafHint(root: record.root, depth: record.depth, nestingDepth: nestingDepth, leaf: leaf, leafNumber: leaf.number, path: path)
    }

    /// Forgets the hinted leaf (see `LeafHint` for when this is required).
    @inline(__always)
    func forgetLeafHint() {
        leafHint = nil
    }

    /// The hinted leaf and the position of `key` in it, if the hint is for the tree `record` and
    /// `key` belongs to that leaf; nil sends the insert down from the root.
    func hintedLeaf(for record: TreeRecord, key: UnsafeRawBufferPointer) throws -> (leaf: PageBuffer, index: Int, exact: Bool)? {
        guard let hint = leafHint, hint.root == record.root, hint.depth == record.depth,
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
