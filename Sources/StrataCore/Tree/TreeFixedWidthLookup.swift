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
}
