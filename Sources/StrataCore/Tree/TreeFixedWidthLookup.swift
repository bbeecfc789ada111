/// Point lookups of many keys of one width laid end to end in one buffer: what a bulk read by
/// identifier does (every key is an identifier plus the same suffix). The group lookup of
/// `TreeGroupLookup.swift`, without an array of key views: the caller builds the keys in one
/// allocation and each key is a slice of it, cut where the lookup reads it.
extension Transaction {
    /// Looks up each key of `width` bytes in `keys` (`keys.count / width` of them, one after the
    /// other) in `tree` and calls `found` with its position and the value stored under it (nil
    /// where absent), in order. Answers and rules as `forEachValue(of:in:_:)`: zero-copy views,
    /// and `found` must not change the transaction (the lookups stop with `StrataError.misuse`).
    ///
    /// - Throws: `StrataError.misuse` when `width` is not positive or `keys.count` is not a
    ///   multiple of it; what `get` throws; what `found` throws.
    public func forEachValue(ofKeysIn keys: UnsafeRawBufferPointer, width: Int, in tree: Tree,
                             _ found: (Int, ByteView?) throws -> Void) throws {
        guard width > 0, keys.count % width == 0 else {
            throw StrataError.misuse("forEachValue: \(keys.count) bytes of keys are not keys of \(width) bytes each")
        }
        try forEachValue(count: keys.count / width, key: { UnsafeRawBufferPointer(rebasing: keys[($0 * width)..<(($0 + 1) * width)]) },
                         in: tree, found)
    }

    /// `forEachValue(ofKeysIn:width:in:_:)` lending each value in place (as `withValue(forKey:in:_:)`
    /// does) instead of as a view: the buffer is valid during the call of `body` only (copy it
    /// to keep it). Why: a view retains and releases the owner of its page, atomic operations a
    /// bulk read of small values pays once per key. Same keys, order, answers, errors and rule
    /// (`body` must not change the transaction) as the view form.
    public func withEachValue(ofKeysIn keys: UnsafeRawBufferPointer, width: Int, in tree: Tree,
                              _ body: (Int, UnsafeRawBufferPointer?) throws -> Void) throws {
        guard width > 0, keys.count % width == 0 else {
            throw StrataError.misuse("withEachValue: \(keys.count) bytes of keys are not keys of \(width) bytes each")
        }
        let record = trees[try state(of: tree)].record
        // Every modification and the end of the transaction bump the counter (see `PageAccess`).
        let stamp = access.modificationCount
        try access.lookupEachNode(in: record, count: keys.count / width,
                                  key: { UnsafeRawBufferPointer(rebasing: keys[($0 * width)..<(($0 + 1) * width)]) }) { position, node, _ in
            if let node { try access.withValue(of: node) { try body(position, $0) } } else { try body(position, nil) }
            guard access.modificationCount == stamp else {
                throw StrataError.misuse("the transaction was changed or ended inside withEachValue; collect the values first, then modify")
            }
        }
    }
}
