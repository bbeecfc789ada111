/// A lookup for a read-modify-write of one key: one descent serves both the read and the put.
///
/// A `get` followed by a `put` of the same key descends twice, and the second descent copies
/// the path. This lookup descends along the path a put takes, makes it writable as the put would
/// (each page copied once per transaction and nesting level, see `touchPath`) and remembers the leaf (`LeafHint`),
/// so the following put of that key into the same tree goes straight to the leaf.
extension WriteTransaction {
    /// The value stored under `key` in `tree` (nil if absent), looked up as the first half of
    /// replacing it: a following `put(key, …, in: tree)` finds the leaf without a descent.
    ///
    /// Changes no entry: the tree holds what it held, and its `TreeRecord.lastModified` stays
    /// (its record may name a copied root, as after any write). Without the put, no entry
    /// changes, but the copied path makes the transaction commit a generation. The returned view is valid until `tree` changes, so
    /// read (decode) it before the put. A key longer than the tree takes is absent (as for `get`).
    /// - Throws: what a put's descent throws (a damaged page, a finished transaction, a tree
    ///   of another transaction); a failure while copying the path fails the transaction, as
    ///   after a put that failed halfway.
    /// (Inlinable, as `put`: the key's bytes are lent in the caller's module, specialized.)
    @inlinable
    public func valueForReplacing(_ key: some BytesConvertible, in tree: Tree) throws -> ByteView? {
        try key.withBytes { try valueForReplacing(bytes: $0, in: tree) }
    }

    /// `valueForReplacing` of a key lent for the call.
    @usableFromInline
    func valueForReplacing(bytes key: UnsafeRawBufferPointer, in tree: Tree) throws -> ByteView? {
        let index = try state(of: tree)
        var record = trees[index].record
        guard record.root != 0 else { return nil }
        let originalRoot = record.root
        defer {
            // The path is copied even if the lookup throws halfway: the copied root replaced the
            // old one (now freed), so the record must name it.
            if record.root != originalRoot {
                trees[index].record = record
                trees[index].isDirty = true
            }
        }
        guard key.count <= PageLayout.maximumKeySize(pageSize: pageSize) else { return nil }
        return try modifying {
            // Counted as a modification: open cursors must be positioned again, and a failure fails the transaction.
            access.modificationCount += 1
            var (path, leaf) = try touchPath(&record, key: key)
            let page = try leaf.page()
            let (position, exact) = try page.search(key)
            rememberLeaf(leaf, path: &path, record: record, index: position)
            return exact ? try access.value(of: try page.leaf(position), in: page) : nil
        }
    }
}
