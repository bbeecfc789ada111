// Design: a range read through a reference index (each index key ends with the identifier of
// an instance in the primary tree) in two steps without a `ByteView` per entry:
// `Transaction.referencedKeys(in:...)` walks the index range and remembers where each named key
// lies, then `Transaction.forEachValue(of:in:_:)` looks them up a group at a time
// (`PageAccess.lookupEachNode`) and lends each value in place.
//
// Why: a view per index entry, per identifier and per value retains and releases its owner
// (atomic operations, about a tenth of a range row's time) and goes through an array of views.
//
// Safety: the remembered keys point into pages of the transaction, which stay where they are
// while the transaction is neither modified nor ended; both bump its modification count
// (`PageAccess.modificationCount`), which `forEachValue` compares with the count at the walk
// before it reads a key and after each call of its body, as `TreeScan` does with its path.

/// The keys of another tree that a range of index entries names, collected by
/// `Transaction.referencedKeys(in:from:to:reverse:limit:referenceStart:)` and looked up with
/// `Transaction.forEachValue(of:in:_:)`. Valid only in the transaction that collected it, until
/// that transaction is modified or ended; a later use is `StrataError.misuse`.
public struct ReferencedKeys {
    let access: PageAccess
    let stamp: Int
    /// Views into pages of the transaction (see the design note above).
    let keys: [UnsafeRawBufferPointer]

    /// How many index entries the walk met (one key each).
    public var count: Int { keys.count }
}

extension Transaction {
    /// Walks the entries of `index` with `lower <= key < upper` (in descending order when
    /// `reverse`), at most `limit` (none if `limit <= 0`), and remembers for each the key of
    /// another tree it names: the bytes of the entry's key from `referenceStart(key)` to its end.
    /// The result is valid only in this transaction, until it is modified or ended; look the
    /// keys up with `forEachValue(of:in:_:)` before any write.
    ///
    /// ```swift
    /// // Index keys are "<city>|<user id>"; the users tree maps a user id to its record.
    /// let ids = try tx.referencedKeys(in: byCity, from: Array("Oslo|".utf8), to: Array("Oslo}".utf8),
    ///                                 reverse: false, limit: 100) { key in
    ///     key.firstIndex(of: UInt8(ascii: "|")).map { $0 + 1 } ?? key.count
    /// }
    /// var records: [[UInt8]] = []
    /// try tx.forEachValue(of: ids, in: users) { _, _, record in
    ///     if let record { records.append(Array(record)) }
    /// }
    /// ```
    ///
    /// - Throws: `StrataError.closed` if the transaction ended and `StrataError.misuse` if
    ///   `index` is a handle of another transaction (both whatever `limit` is);
    ///   `StrataError.misuse` if `referenceStart` returns an offset outside `0...key.count`; what
    ///   `scan` throws; what `referenceStart` throws (the walk stops).
    public func referencedKeys(in index: Tree, from lower: [UInt8]?, to upper: [UInt8]?, reverse: Bool, limit: Int,
                               referenceStart: (UnsafeRawBufferPointer) throws -> Int) throws -> ReferencedKeys {
        // The transaction and the handle are checked whatever the limit: an ended transaction is
        // `closed` and another transaction's handle `misuse` even when no key is to be collected.
        let record = trees[try state(of: index)].record
        var keys: [UnsafeRawBufferPointer] = []
        let stamp = access.modificationCount
        if limit > 0 {
            let scan = TreeScan(access: access, record: record, lower: lower, upper: upper, upperInclusive: false)
            // Closure literals (not a local function) so that `keys` is not boxed and checked
            // for exclusive access at run time on every entry.
            if reverse {
                try scan.backwardNodes(enteringLeaf: { _ in }) { try Self.remember($0, in: &keys, limit: limit, referenceStart) }
            } else {
                try scan.forwardNodes(enteringLeaf: { _ in }) { try Self.remember($0, in: &keys, limit: limit, referenceStart) }
            }
        }
        return ReferencedKeys(access: access, stamp: stamp, keys: keys)
    }

    /// Appends the key `node` names to `keys`; whether fewer than `limit` are collected.
    @inline(__always)
    private static func remember(_ node: Page.LeafNode, in keys: inout [UnsafeRawBufferPointer], limit: Int,
                                 _ referenceStart: (UnsafeRawBufferPointer) throws -> Int) throws -> Bool {
        let key = node.key
        let start = try referenceStart(key)
        guard start >= 0, start <= key.count else {
            throw StrataError.misuse("referencedKeys: reference start \(start) outside the index key's \(key.count) bytes")
        }
        keys.append(UnsafeRawBufferPointer(rebasing: key[start...]))
        return keys.count < limit
    }

    /// Looks up each key of `keys` in `tree` and calls `found` with its position, the key and the
    /// value stored under it (nil where absent), in the order of the walk. The buffers are valid
    /// during the call only (copy them to keep them); `found` must not change the transaction.
    ///
    /// - Throws: `StrataError.misuse` if `keys` came from another transaction, or this one was
    ///   changed or ended since the walk or inside `found` (then no further key is read); what
    ///   `get` throws; what `found` throws (the lookups stop).
    public func forEachValue(of keys: ReferencedKeys, in tree: Tree,
                             _ found: (Int, UnsafeRawBufferPointer, UnsafeRawBufferPointer?) throws -> Void) throws {
        guard keys.access === access else {
            throw StrataError.misuse("forEachValue(of:in:): the referenced keys were collected in another transaction")
        }
        let misuse = StrataError.misuse("the transaction was changed or ended after referencedKeys or inside forEachValue; collect the values first, then modify")
        guard access.modificationCount == keys.stamp else { throw misuse }
        let record = trees[try state(of: tree)].record
        try keys.keys.withUnsafeBufferPointer { list in
            try access.lookupEachNode(in: record, count: list.count, key: { list[$0] }) { position, node, _ in
                if let node {
                    try access.withValue(of: node) { try found(position, list[position], $0) }
                } else {
                    try found(position, list[position], nil)
                }
                guard access.modificationCount == keys.stamp else { throw misuse }
            }
        }
    }
}
