/// Point lookups of many keys of one tree, handed to the caller one by one as they are found: what
/// a range read through an index does with the identifiers it collected (issue #16).
///
/// Why another batched lookup: `PageAccess.lookup(in:keys:)` advances every key of a batch level
/// by level, with arrays of pending keys and results, which cost about a quarter more instructions
/// per key than a single lookup. Here the keys go in groups: for each key of a group the branch
/// levels are walked (their pages are shared by the group's keys and stay in the cache) and its
/// leaf prefetched; then each key is searched in its leaf, whose lines have been arriving in the
/// meantime, and passed on. The misses on leaves still overlap, and nothing is allocated.
///
/// Same checks and results as `lookup(in:key:)` for each key (the pages met are checked by
/// `treePage`, as in every descent).
extension PageAccess {
    /// Keys looked up together: enough leaf misses in flight, and their leaves stay in the cache.
    static let groupLookupSize = 32

    /// Calls `found` with each position `0..<count` in order and the value stored under
    /// `key(position)`, or nil if there is none.
    func lookupEach(in record: TreeRecord, count: Int, key: (Int) -> UnsafeRawBufferPointer,
                    _ found: (Int, ByteView?) throws -> Void) throws {
        try lookupEachNode(in: record, count: count, key: key) { position, node, leafNumber in
            try found(position, try node.map { try value(of: $0, owner: owner(of: leafNumber)) })
        }
    }

    /// `lookupEach` with the leaf node found (nil where absent) and the number of its leaf page,
    /// for callers that read the value in place (`withValue(of:_:)`) instead of through a view.
    @inline(__always)
    func lookupEachNode(in record: TreeRecord, count: Int, key: (Int) -> UnsafeRawBufferPointer,
                        _ found: (Int, Page.LeafNode?, UInt64) throws -> Void) throws {
        guard record.root != 0 else {
            for position in 0..<count { try found(position, nil, 0) }
            return
        }
        let depth = record.depth
        try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: Self.groupLookupSize) { leaves in
            var start = 0
            while start < count {
                let end = min(count, start + Self.groupLookupSize)
                for position in start..<end {
                    var number = record.root
                    var level = 1
                    while level < depth {
                        let page = try treePage(number, level: level, depth: depth)
                        number = try page.child(try page.search(key(position)).index)
                        level += 1
                    }
                    if depth > 1 { prefetch(number) }
                    leaves[position - start] = number
                }
                for position in start..<end {
                    // `max`: a damaged record of depth 0 must fail the leaf's level check.
                    let leaf = try treePage(leaves[position - start], level: max(1, depth), depth: depth)
                    let (index, exact) = try leaf.search(key(position))
                    try found(position, exact ? try leaf.leaf(index) : nil, leaf.number)
                }
                start = end
            }
        }
    }
}

extension Transaction {
    /// Looks up each of `keys` in `tree` and calls `found` with its position in `keys` and the
    /// value stored under it (nil where absent), in the order of `keys`. The views are zero-copy,
    /// as with `get`. Cheaper than `get(_:in:)` for many keys (no result array, leaves fetched a
    /// group at a time); throws what `get` throws, and what `found` throws (the lookups stop).
    ///
    /// `found` must not change the transaction (write, abort, end): the lookups remember leaf
    /// pages of the tree as it was, which a change may move or recycle. If it does, the lookups
    /// stop with `StrataError.misuse` before another page is read.
    public func forEachValue(of keys: [ByteView], in tree: Tree, _ found: (Int, ByteView?) throws -> Void) throws {
        try keys.withUnsafeBufferPointer { keys in
            try forEachValue(count: keys.count, key: { keys[$0].buffer }, in: tree, found)
        }
    }

    /// The lookups of the `forEachValue` calls (here and in `TreeFixedWidthLookup.swift`), with
    /// key number `position` given by `key(position)`.
    func forEachValue(count: Int, key: (Int) -> UnsafeRawBufferPointer, in tree: Tree,
                      _ found: (Int, ByteView?) throws -> Void) throws {
        let record = trees[try state(of: tree)].record
        // Every modification and the end of the transaction bump the counter (see `PageAccess`).
        let stamp = access.modificationCount
        try access.lookupEach(in: record, count: count, key: key) { position, value in
            try found(position, value)
            guard access.modificationCount == stamp else {
                throw StrataError.misuse("the transaction was changed or ended inside forEachValue; collect the values first, then modify")
            }
        }
    }
}
