/// The lookup a unique index makes before it inserts an entry: is a key starting with a value
/// there already? Entries of an index are `value ++ identifier`, so the first key at or after the
/// value answers it (`withFirstKey(atOrAfter:)`), at the price of a descent from the root per write.
///
/// A write transaction that inserts index entries in (or near) key order — a batch of inserts, or
/// values that grow — has just inserted into the leaf where the value's keys would be, and that
/// leaf is its hint (`LeafHint`; `valueForReplacing` sets it too). This lookup answers from the hinted leaf when the keys starting
/// with the value can only lie there, and descends as before otherwise.
extension WriteTransaction {
    /// Calls `body` with the first key of `tree` that starts with `prefix` (lent for the call), or
    /// with nil if no key does.
    ///
    /// Answered without a descent when `prefix` falls in the range of the tree's hinted leaf (the
    /// leaf the last insert into `tree` went into, or that `valueForReplacing` last looked up): the first key at or after `prefix` is in that leaf, or it is at or after the
    /// leaf's upper separator, and when that separator does not start with `prefix` (it is greater
    /// than `prefix`) no such key starts with it either. Otherwise one descent, as
    /// `withFirstKey(atOrAfter:in:)`.
    /// - Throws: what `withFirstKey(atOrAfter:in:)` throws (a damaged page, a tree of another
    ///   transaction, a finished transaction).
    public func withFirstKey<Result>(startingWith prefix: UnsafeRawBufferPointer, in tree: Tree,
                                     _ body: (UnsafeRawBufferPointer?) throws -> Result) throws -> Result {
        let record = trees[try state(of: tree)].record
        if record.root != 0, let (leaf, index, _, _) = try hintedLeaf(for: record, key: prefix) {
            let page = try leaf.page()
            if index < page.count {
                let key = try page.leafKey(index)
                leafHintLookups &+= 1
                return try body(Self.hasPrefix(key, prefix) ? key : nil)
            }
            // Past the leaf's last key and before its upper separator (if any): every later key is at
            // or after the separator, which is greater than `prefix`.
            guard let position = leafHints.position(root: record.root), let upper = try leafHints.upperBound(at: position) else {
                leafHintLookups &+= 1
                return try body(nil)
            }
            if !Self.hasPrefix(upper, prefix) {
                leafHintLookups &+= 1
                return try body(nil)
            }
        }
        return try withFirstKey(atOrAfter: prefix, in: tree) { key in
            guard let key, Self.hasPrefix(key, prefix) else { return try body(nil) }
            return try body(key)
        }
    }
}
