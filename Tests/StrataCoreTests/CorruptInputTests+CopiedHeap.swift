import Foundation
import Testing
@testable import StrataCore

/// A leaf read from the file is checked whole when a write transaction copies it (the check runs
/// on the copy: `WriteTransaction.copyFromFile`). A forged leaf whose heap is corrupt (two slots
/// naming one node, checksum resealed) must fail the write with `corruptPage` naming the page of
/// the file, commit nothing, and leave the store writable (the refused copy's buffer goes back to
/// the pool and is reused by later transactions).
extension CorruptInputTests {
    /// A store whose tree "t" (depth 2) has a first leaf with its second slot forged to name the
    /// first slot's node. Returns the directory and that leaf's page number.
    func storeWithACorruptLeafHeap() throws -> (TemporaryDirectory, UInt64) {
        let dir = TemporaryDirectory()
        let (root, pages) = try { () throws -> (UInt64, ForgeablePages) in
            let db0 = try Database(path: dir.path)
            defer { db0.close() }
            return try commitDepthTwoTree(db0)
        }()
        let leaf = ForgeablePages.branchNode(0, of: try pages.read(root)).child
        var page = try pages.read(leaf)
        try #require(page[PageLayout.kindOffset] == PageKind.leaf.rawValue)
        let slotOne = PageLayout.headerSize + 2
        page.replaceSubrange(slotOne..<slotOne + 2, with: page[PageLayout.headerSize..<PageLayout.headerSize + 2])
        try pages.write(page, at: leaf)
        return (dir, leaf)
    }

    @Test func copyingALeafWithACorruptHeapFailsBeforeCommitting() throws {
        let (dir, leaf) = try storeWithACorruptLeafHeap()
        let db = try Database(path: dir.path)
        defer { db.close() }
        let generation = db.generation
        for _ in 0..<3 {
            var thrown: (any Error)?
            do {
                try db.write { tx in try tx.put("key 00000", "changed", in: try tx.tree("t")) }
            } catch {
                thrown = error
            }
            // The error names the page of the file (the copy is checked before it is renumbered).
            guard case StrataError.corruptPage(page: let page, reason: _)? = thrown else {
                Issue.record("expected corruptPage, got \(String(describing: thrown))")
                return
            }
            #expect(page == leaf)
            #expect(db.generation == generation) // nothing was committed
        }
        try expectStillWritable(db)
    }
}
