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

    /// Point lookup without a cursor: descend from the root, checking depth at every level.
    func lookup(in record: TreeRecord, key: UnsafeRawBufferPointer) throws -> ByteView? {
        var number = record.root
        guard number != 0 else { return nil }
        var level = 1
        while true {
            let page = try self.page(number)
            let (index, exact) = try page.search(key)
            if page.isLeaf {
                guard level == record.depth else {
                    throw StrataError.corruptPage(page: number, reason: "leaf at level \(level) of a tree of depth \(record.depth)")
                }
                guard exact else { return nil }
                return try value(of: try page.leaf(index), in: page)
            }
            guard level < record.depth else {
                throw StrataError.corruptPage(page: number, reason: "branch below the tree's depth \(record.depth): a cycle or a damaged tree")
            }
            number = try page.child(index)
            level += 1
        }
    }
}
