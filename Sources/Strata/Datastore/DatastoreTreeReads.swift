import StrataCore

/// The tree reads, by tree name, that a datastore's read paths need from a snapshot. A
/// `StoreReadContext` (one transaction, many calls) and a `ReadSnapshot` (the single lookup of a
/// `Datastore.load` call, without transaction objects) both provide them, so each read path
/// (`DatastoreLookup`, `DatastoreReader.forEachIndexed`) is written once.
protocol DatastoreTreeReads {
    /// The value stored under `key` in the tree called `name`; nil if either is missing.
    func get(_ key: some BytesConvertible, inTree name: String) throws -> ByteView?
    /// Entries of the tree called `name` with `lower <= key < upper`, until `body` returns false;
    /// a missing tree is empty.
    func scan(inTree name: String, from lower: [UInt8]?, to upper: [UInt8]?, reverse: Bool,
              _ body: (ByteView, ByteView) throws -> Bool) throws
    /// The value stored under `key` in the tree called `name` (nil if either is missing), lent in
    /// place, valid during `body` only: no view, so no retain and release of its owner (the
    /// single-instance loads of `DatastoreLookup`). Not generic over the key: called from
    /// unspecialized code, a generic one dispatches the key through its protocol too.
    func withValue(rawKey key: UnsafeRawBufferPointer, inTree name: String, _ body: (UnsafeRawBufferPointer?) throws -> Void) throws
    /// The first entry of the tree called `name` at or after `key` (nil if none or no such tree),
    /// lent in place, valid during `body` only.
    func withFirstEntry(atOrAfter key: UnsafeRawBufferPointer, inTree name: String,
                        _ body: ((key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?) throws -> Void) throws
}

extension DatastoreTreeReads {
    /// Visits the entries of the tree called `treeName` in `range`, at most `limit` of them.
    func scan(_ treeName: String, _ range: KeyRange, order: RangeOrder, limit: Int?,
              _ body: (ByteView, ByteView) throws -> Void) throws {
        guard !range.isEmpty, limit != 0 else { return }
        var remaining = limit ?? Int.max
        try scan(inTree: treeName, from: range.lower, to: range.upper, reverse: order == .descending) { key, value in
            try body(key, value)
            remaining -= 1
            return remaining > 0
        }
    }
}

extension ReadSnapshot: DatastoreTreeReads {
    func withValue(rawKey key: UnsafeRawBufferPointer, inTree name: String, _ body: (UnsafeRawBufferPointer?) throws -> Void) throws {
        try withValue(forKey: key, inTree: name, body)
    }
}

extension StoreReadContext: DatastoreTreeReads {
    func get(_ key: some BytesConvertible, inTree name: String) throws -> ByteView? {
        guard let tree = try tree(name) else { return nil }
        return try transaction.get(key, in: tree)
    }

    func scan(inTree name: String, from lower: [UInt8]?, to upper: [UInt8]?, reverse: Bool,
              _ body: (ByteView, ByteView) throws -> Bool) throws {
        guard let tree = try tree(name) else { return }
        try transaction.scan(tree, from: lower, to: upper, reverse: reverse, body)
    }

    func withValue(rawKey key: UnsafeRawBufferPointer, inTree name: String, _ body: (UnsafeRawBufferPointer?) throws -> Void) throws {
        guard let tree = try tree(name) else { return try body(nil) }
        try transaction.withValue(forKey: key, in: tree, body)
    }

    func withFirstEntry(atOrAfter key: UnsafeRawBufferPointer, inTree name: String,
                        _ body: ((key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?) throws -> Void) throws {
        guard let tree = try tree(name) else { return try body(nil) }
        try transaction.withFirstEntry(atOrAfter: key, in: tree, body)
    }
}
