/// The unique-index check as the first half of the insert that follows it: one descent serves both.
///
/// A unique index asks "is a key starting with this value stored?" (`withFirstKey(startingWith:)`)
/// and then puts `value ++ identifier`, which lands in the leaf the question was answered from.
/// When no hint answers the question, the plain lookup descends once and the put descends again
/// (copying the path). This lookup descends as the put would, makes the path writable as the put
/// would (`touchPath`, as `valueForReplacing` does) and leaves that leaf as the tree's hint
/// (`LeafHint`), from which it answers; the put then goes straight to the leaf.
extension WriteTransaction {
    /// `withFirstKey(startingWith:in:_:)` for a caller about to insert a key starting with
    /// `prefix` into `tree`: the same answer, and a following put of such a key finds its leaf
    /// without a descent.
    ///
    /// Changes no entry, but copies the path to the leaf (so a transaction whose only call was
    /// this one commits a generation, as after `valueForReplacing`).
    /// - Throws: what `withFirstKey(startingWith:in:_:)` and a put's descent throw (a damaged
    ///   page, a tree of another transaction, a finished transaction); a failure while copying
    ///   the path fails the transaction, as after a put that failed halfway.
    public func withFirstKey<Result>(startingWith prefix: UnsafeRawBufferPointer, beforeInsertingInto tree: Tree,
                                     _ body: (UnsafeRawBufferPointer?) throws -> Result) throws -> Result {
        let index = try state(of: tree)
        var record = trees[index].record
        if record.root != 0, prefix.count <= PageLayout.maximumKeySize(pageSize: pageSize),
           try hintedLeaf(for: record, key: prefix) == nil {
            let originalRoot = record.root
            defer {
                // The copied root replaced the old one (now freed), even if the copy failed halfway.
                if record.root != originalRoot {
                    trees[index].record = record
                    trees[index].isDirty = true
                }
            }
            try modifying {
                // Counted as a modification: open cursors re-seek, and a failure fails the transaction.
                access.modificationCount += 1
                let (path, leaf) = try touchPath(&record, key: prefix)
                rememberLeaf(leaf, path: path, record: record)
            }
        }
        // Answered from the hinted leaf now (or, past its end, as the plain lookup answers).
        return try withFirstKey(startingWith: prefix, in: tree, body)
    }
}
