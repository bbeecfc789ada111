/// Point lookups: one descent from the root, no cursor. Shared by transactions and `ReadSnapshot`.
extension PageAccess {
    /// The validated catalog entry `name` of the catalog tree `catalog`, or nil.
    func catalogEntry(named name: String, in catalog: TreeRecord) throws -> TreeRecord? {
        guard let bytes = try name.withBytes({ try lookup(in: catalog, key: $0) }) else { return nil }
        guard bytes.count == TreeRecord.encodedSize else {
            throw StrataError.corruptPage(page: catalog.root, reason: "catalog entry for '\(name)' has \(bytes.count) bytes")
        }
        let record = bytes.withUnsafeBytes { TreeRecord(decoding: $0.baseAddress!) }
        if let problem = record.validate(pageCount: UInt64.max >> 16) {
            throw StrataError.corruptPage(page: catalog.root, reason: "catalog entry for '\(name)': \(problem)")
        }
        return record
    }

    /// Point lookup without a cursor: one descent from the root (see `TreeDescent.swift`).
    func lookup(in record: TreeRecord, key: UnsafeRawBufferPointer) throws -> ByteView? {
        guard record.root != 0 else { return nil }
        let (leaf, index, exact) = try descend(from: record.root, level: 1, depth: record.depth, towards: .key(key))
        guard exact else { return nil }
        return try value(of: try leaf.leaf(index), in: leaf)
    }

    /// The first entry whose key is at or after `key`, or nil if there is none: one descent and no
    /// scan path unless that entry starts the next leaf (then a scan from `key` finds it).
    func firstEntry(in record: TreeRecord, atOrAfter key: UnsafeRawBufferPointer) throws -> (key: ByteView, value: ByteView)? {
        guard record.root != 0 else { return nil }
        let (leaf, index, _) = try descend(from: record.root, level: 1, depth: record.depth, towards: .key(key))
        if index < leaf.count {
            let node = try leaf.leaf(index)
            return (ByteView(node.key, owner: owner(of: leaf.number)), try value(of: node, in: leaf))
        }
        var entry: (key: ByteView, value: ByteView)?
        try TreeScan(access: self, record: record, lower: Array(key), upper: nil, upperInclusive: false).forward { key, value in
            entry = (key, value)
            return false
        }
        return entry
    }
}

extension PageAccess {
    /// Point lookups of many keys in one tree, level by level: once a key's child page is known,
    /// its lines are prefetched, and the key is searched there only after the other keys of the
    /// batch have taken their step. The misses of different keys overlap instead of queueing one
    /// behind another. Same checks and results as `lookup` for each key.
    func lookup<Key: BytesConvertible>(in record: TreeRecord, keys: [Key]) throws -> [ByteView?] {
        var results = [ByteView?](repeating: nil, count: keys.count)
        guard record.root != 0 else { return results }
        var pages = [UInt64](repeating: record.root, count: keys.count)
        // Batches of a few dozen: enough misses in flight, and their pages stay in the cache.
        for start in stride(from: 0, to: keys.count, by: PageAccess.lookupBatchSize) {
            try lookup(in: record, keys: keys, range: start..<min(keys.count, start + PageAccess.lookupBatchSize), pages: &pages, into: &results)
        }
        return results
    }

    static let lookupBatchSize = 32

    /// One batch: `pages[slot]` holds the page each key of `range` is at (the root initially).
    private func lookup<Key: BytesConvertible>(in record: TreeRecord, keys: [Key], range: Range<Int>, pages: inout [UInt64],
                        into results: inout [ByteView?]) throws {
        var pending = Array(range)
        var level = 1
        while !pending.isEmpty {
            var next: [Int] = []
            next.reserveCapacity(pending.count)
            for slot in pending {
                let page = try treePage(pages[slot], level: level, depth: record.depth)
                let (index, exact) = try keys[slot].withBytes { try page.search($0) }
                if page.isLeaf {
                    if exact { results[slot] = try value(of: try page.leaf(index), in: page) }
                    continue
                }
                let child = try page.child(index)
                pages[slot] = child
                if level + 1 == record.depth { prefetch(child) }
                next.append(slot)
            }
            pending = next
            level += 1
        }
    }
}
