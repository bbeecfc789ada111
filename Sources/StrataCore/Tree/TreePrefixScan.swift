import Glibc

/// The entries whose keys start with one prefix, when there are few: one descent and a walk of
/// the leaf it reaches, without the path array, bounds and per-entry views of a `TreeScan`. A
/// property's history (entity and key, then a datestamp per entry) is such a range. When the
/// range goes on past the leaf (or starts in the next one), the rest is read by a `TreeScan`
/// from just past the last entry shown, so every entry is shown once, in key order.
extension Transaction {
    /// Calls `body` with the key and value of each entry of `tree` whose key starts with
    /// `prefix`, in ascending key order, until it returns false. The buffers are valid during
    /// the call only (copy them to keep them). `body` must not change the transaction (write,
    /// abort, end) and then ask for more: the walk stops with `StrataError.misuse` before another
    /// entry is read if it does (a body that changes it and returns false ends the walk quietly).
    ///
    /// - Throws: `StrataError.misuse` when `body` changed the transaction and returned true; what
    ///   `scan` throws; what `body` throws (the walk stops).
    public func forEachEntry(withPrefix prefix: UnsafeRawBufferPointer, in tree: Tree,
                             _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool) throws {
        let record = trees[try state(of: tree)].record
        guard record.root != 0 else { return }
        let stamp = access.modificationCount
        let (leaf, start, _) = try access.descend(from: record.root, level: 1, depth: record.depth, towards: .key(prefix))
        var index = start
        while index < leaf.count {
            let node = try leaf.leaf(index)
            guard Self.hasPrefix(node.key, prefix) else { return }
            let more = try access.withValue(of: node) { try body(node.key, $0) }
            // As in `TreeScan`: a change matters only if another entry is to be read.
            guard more else { return }
            guard access.modificationCount == stamp else {
                throw StrataError.misuse("the transaction was changed inside forEachEntry(withPrefix:); collect the entries first, then modify")
            }
            index += 1
        }
        // The leaf ended inside the range: the rest starts past the last key shown (that key
        // followed by a zero byte is the least key after it), or at the prefix.
        let lower = index > start ? Array(try leaf.leaf(index - 1).key) + [0] : Array(prefix)
        try TreeScan(access: access, record: record, lower: lower, upper: nil, upperInclusive: false).forward { key, value in
            guard Self.hasPrefix(key.buffer, prefix) else { return false }
            return try body(key.buffer, value.buffer)
        }
    }

    /// Whether `key` starts with `prefix`. A prefix of eight bytes or more is compared a word at
    /// a time, the last word overlapping the one before it (cheaper than a call of `memcmp` per
    /// entry of a short range).
    @inline(__always)
    static func hasPrefix(_ key: UnsafeRawBufferPointer, _ prefix: UnsafeRawBufferPointer) -> Bool {
        let count = prefix.count
        guard key.count >= count else { return false }
        guard count >= 8 else { return count == 0 || memcmp(key.baseAddress!, prefix.baseAddress!, count) == 0 }
        let x = key.baseAddress!, y = prefix.baseAddress!
        var offset = 0
        while offset &+ 8 <= count {
            guard x.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == y.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset &+= 8
        }
        return offset == count
            || x.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self) == y.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
    }
}
