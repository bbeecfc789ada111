extension PageAccess {
    /// Every tree's last-modifying commit in the snapshot whose catalog is `catalog`, by name
    /// (its bytes: two trees whose names are only canonically equivalent have a stamp each),
    /// from one walk of the catalog.
    ///
    /// Change streams compare these between the generations they report, so a commit's changed
    /// trees cost one catalog walk per delivery (shared by every stream of the store), not a
    /// descent per tree per stream. Catalog values are checked for their size before anything is
    /// read from them: a forged catalog gives `corruptPage`, never an out-of-bounds read.
    func treeStamps(catalog: TreeRecord) throws -> [TreeName.Key: UInt64] {
        var stamps: [TreeName.Key: UInt64] = [:]
        let cursor = Cursor(access: self, record: catalog)
        var more = try cursor.first()
        while more {
            let name = String(decoding: try cursor.currentKeyBytes(), as: UTF8.self)
            let value = try cursor.value()
            guard value.count == TreeRecord.encodedSize else {
                throw StrataError.corruptPage(page: catalog.root, reason: "catalog entry for '\(name)' has \(value.count) bytes")
            }
            stamps[TreeName.Key(name)] = value.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: TreeRecord.lastModifiedOffset, as: UInt64.self) }
            more = try cursor.next()
        }
        return stamps
    }
}

extension ReadSnapshot {
    /// Every tree's last-modifying commit in this snapshot, by name (see `PageAccess.treeStamps`).
    func treeStamps() throws -> [TreeName.Key: UInt64] {
        try checkActive()
        return try access.treeStamps(catalog: catalog)
    }
}
