extension WriteTransaction {
    /// Gives a tree another name without copying anything: its pages, entries and statistics
    /// now belong to `newName`, and the old name no longer exists (as if dropped, but no page is
    /// freed). Returns the handle under the new name; the old handle is no longer valid. It counts
    /// as a modification: cursors must be positioned again and a scan whose body renames a tree
    /// throws `misuse` when it goes on. Throws `treeExists` if `newName` is taken, `misuse` for an
    /// invalid name.
    @discardableResult
    public func renameTree(_ tree: Tree, to newName: String) throws -> Tree {
        let index = try state(of: tree)
        guard !newName.isEmpty, newName.utf8.count <= PageLayout.maximumKeySize(pageSize: pageSize) else {
            throw StrataError.misuse("tree names must be 1...\(PageLayout.maximumKeySize(pageSize: pageSize)) bytes of UTF-8")
        }
        if try treeIfPresent(newName) != nil { throw StrataError.treeExists(name: newName) }
        // No page changes, but what the old handle names does: cursors over it must read the
        // catalog state again before positioning (`Cursor.reset`).
        access.modificationCount += 1
        var record = trees[index].record
        record.lastModified = transactionID
        trees[index].record = TreeRecord()
        trees[index].isDropped = true
        trees[index].isDirty = true
        if let dropped = openedTreeIndex(newName) {
            // The new name was dropped earlier in this transaction: its slot is reused.
            trees[dropped] = TreeState(name: newName, record: record, isDirty: true)
            return Tree(name: newName, index: dropped, transactionSerial: serial)
        }
        return register(TreeState(name: newName, record: record, isDirty: true))
    }
}
