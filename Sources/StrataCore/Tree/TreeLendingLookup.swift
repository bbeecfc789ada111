/// Point lookups that lend the bytes found in place for the duration of a call, instead of
/// returning a `ByteView`: what a typed load does with a value it only decodes (issue #16).
///
/// Why: a view retains the owner of its memory (the mapping or a dirty page) and its holder
/// releases it, two atomic operations per view; a typed load by a unique index handed out four
/// views (the index entry's key and value, the identifier, the instance). A lent buffer needs no
/// owner: the page stays where it is while the call runs, since nothing in the call may change
/// the transaction or end the snapshot (as with `forEachEntry(withPrefix:)`; the `Transaction`
/// forms report a change made inside the body as `misuse` once it returns).
extension PageAccess {
    /// Calls `body` with the value stored under `key` (nil if there is none), valid during the call only.
    @inline(__always)
    func withValue<Result>(in record: TreeRecord, key: UnsafeRawBufferPointer,
                           _ body: (UnsafeRawBufferPointer?) throws -> Result) throws -> Result {
        guard record.root != 0 else { return try body(nil) }
        let (leaf, index, exact) = try descend(from: record.root, level: 1, depth: record.depth, towards: .key(key))
        guard exact else { return try body(nil) }
        return try withValue(of: try leaf.leaf(index), body)
    }

    /// Calls `body` with the first entry whose key is at or after `key` (nil if there is none),
    /// valid during the call only: `firstEntry(in:atOrAfter:)` without views.
    @inline(__always)
    func withFirstEntry<Result>(in record: TreeRecord, atOrAfter key: UnsafeRawBufferPointer,
                                _ body: ((key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?) throws -> Result) throws -> Result {
        guard record.root != 0 else { return try body(nil) }
        let (leaf, index, _) = try descend(from: record.root, level: 1, depth: record.depth, towards: .key(key))
        if index < leaf.count {
            let node = try leaf.leaf(index)
            return try withValue(of: node) { try body((node.key, $0)) }
        }
        // Past the end of the leaf: the entry starts the next one, which a scan walks to.
        var result: Result?
        try TreeScan(access: self, record: record, lower: Array(key), upper: nil, upperInclusive: false)
            .forwardNodes(enteringLeaf: { _ in }) { node in
                result = try withValue(of: node) { try body((node.key, $0)) }
                return false
            }
        if let result { return result }
        return try body(nil)
    }
}

extension ReadSnapshot {
    /// Calls `body` once with the value stored under `key` in the tree called `name` (nil if
    /// either is missing), in place: valid during the call only, copy it to keep it.
    ///
    /// - Throws: `StrataError.misuse` after the snapshot's `withSnapshot` call returned;
    ///   `StrataError.corruptPage` for a damaged page on the path; `StrataError.snapshotOverwritten`
    ///   if a page the snapshot reads was written after it (its pin was missing); what `body`
    ///   throws.
    public func withValue(forKey key: UnsafeRawBufferPointer, inTree name: String,
                          _ body: (UnsafeRawBufferPointer?) throws -> Void) throws {
        guard let record = try record(ofTree: name) else { return try body(nil) }
        return try access.withValue(in: record, key: key, body)
    }

    /// Calls `body` once with the first entry of the tree called `name` whose key is at or after
    /// `key` (nil if there is none, or no such tree), in place: `firstEntry(atOrAfter:inTree:)`
    /// valid during the call only.
    ///
    /// - Throws: as `withValue(forKey:inTree:_:)`.
    public func withFirstEntry(atOrAfter key: UnsafeRawBufferPointer, inTree name: String,
                               _ body: ((key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?) throws -> Void) throws {
        guard let record = try record(ofTree: name) else { return try body(nil) }
        return try access.withFirstEntry(in: record, atOrAfter: key, body)
    }
}

extension Transaction {
    /// Calls `body` once with the value stored under `key` in `tree` (nil if there is none), in
    /// place: valid during the call only, copy it to keep it. `body` must not change or end the
    /// transaction (the bytes lie in its pages, which a change may move or free).
    ///
    /// To keep what `body` sees, capture it into a local:
    ///
    /// ```swift
    /// var balance: Int64?
    /// try key.withUnsafeBytes { key in
    ///     try tx.withValue(forKey: key, in: accounts) { value in
    ///         balance = value.map { $0.loadUnaligned(as: Int64.self) }
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: `StrataError.closed` if the transaction ended; `StrataError.misuse` if `tree`
    ///   is a handle of another transaction, or `body` changed or ended the transaction (checked
    ///   when it returns); `StrataError.treeNotFound` if the tree was dropped;
    ///   `StrataError.corruptPage` for a damaged page on the path; `StrataError.snapshotOverwritten`
    ///   if a page a read reads was written after its snapshot; what `body` throws.
    public func withValue(forKey key: UnsafeRawBufferPointer, in tree: Tree, _ body: (UnsafeRawBufferPointer?) throws -> Void) throws {
        let record = trees[try state(of: tree)].record
        let stamp = access.modificationCount
        try access.withValue(in: record, key: key, body)
        try checkUnchanged(since: stamp, inside: "withValue(forKey:in:)")
    }

    /// Calls `body` once with the first entry of `tree` whose key is at or after `key` (nil if
    /// there is none), in place: `firstEntry(atOrAfter:in:)` valid during the call only. `body`
    /// must not change or end the transaction.
    ///
    /// ```swift
    /// var first: (key: [UInt8], value: [UInt8])?
    /// try prefix.withUnsafeBytes { prefix in
    ///     try tx.withFirstEntry(atOrAfter: prefix, in: tree) { entry in
    ///         first = entry.map { (Array($0.key), Array($0.value)) }
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: as `withValue(forKey:in:_:)`.
    public func withFirstEntry(atOrAfter key: UnsafeRawBufferPointer, in tree: Tree,
                               _ body: ((key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?) throws -> Void) throws {
        let record = trees[try state(of: tree)].record
        let stamp = access.modificationCount
        try access.withFirstEntry(in: record, atOrAfter: key, body)
        try checkUnchanged(since: stamp, inside: "withFirstEntry(atOrAfter:in:)")
    }

    /// Refuses a change or end of the transaction inside the body of a lending call: nothing is
    /// read after it, but the body broke the rule its bytes depend on, so it is reported.
    private func checkUnchanged(since stamp: Int, inside call: String) throws {
        guard access.modificationCount == stamp else {
            throw StrataError.misuse("the transaction was changed or ended inside \(call); copy the bytes first, then modify")
        }
    }
}
