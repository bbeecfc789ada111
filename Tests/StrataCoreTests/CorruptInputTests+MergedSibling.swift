import Foundation
import Testing
@testable import StrataCore

/// A delete that merges two sibling leaves decides whether they fit from the pages it reads and
/// then edits the copies `touch` makes, which for a page the last commit wrote come from the
/// writer's own buffers, not from the file. A process that rewrites such a page in the file (here
/// a forged header claiming the page is nearly empty, checksum resealed) made the decision and
/// the bytes edited disagree: the merge overran the real, nearly full copy and the writer trapped
/// on a precondition (found in review). The merge now checks the copies again and throws
/// `corruptPage`, commits nothing, and leaves the store writable.
extension CorruptInputTests {
    @Test func aSiblingRewrittenInTheFileUnderTheWriterFailsTheMergeWithATypedError() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        defer { db.close() }
        _ = try commitDepthTwoTree(db)
        // The last commit rewrites the first leaf: the writer keeps its new copy in memory.
        try db.write { tx in try tx.put("key 00000", "changed", in: try tx.tree("t")) }
        let root = try db.read { tx in try tx.record(of: try tx.tree("t")).root }
        let pages = ForgeablePages(data: dir.path + "/data", pageSize: db.pageSize, checksum: db.pageChecksum)
        // Leaf 0 is the one the last commit wrote; the keys of leaf 1 run from the separator of
        // node 1 up to that of node 2.
        let rootPage = try pages.read(root)
        try #require(ForgeablePages.load16(rootPage, PageLayout.countOffset) >= 3)
        let firstLeaf = ForgeablePages.branchNode(0, of: rootPage).child
        let (secondFrom, secondTo) = (ForgeablePages.branchNode(1, of: rootPage).key, ForgeablePages.branchNode(2, of: rootPage).key)
        // Forge the first leaf's header in the file: one node and a heap of 16 bytes, so it looks
        // nearly empty (the header stays consistent; the slot is not looked at).
        var page = try pages.read(firstLeaf)
        try #require(page[PageLayout.kindOffset] == PageKind.leaf.rawValue)
        ForgeablePages.store16(1, &page, PageLayout.countOffset)
        ForgeablePages.store16(PageLayout.headerSize + 2, &page, PageLayout.lowerOffset)
        ForgeablePages.store16(pages.pageSize - 16, &page, PageLayout.upperOffset)
        try pages.write(page, at: firstLeaf)

        // Emptying most of the second leaf makes it merge with its left sibling, the forged one.
        let generation = db.generation
        var thrown: (any Error)?
        do {
            try db.write { tx in
                let t = try tx.tree("t")
                var keys: [String] = []
                try tx.scan(t, from: secondFrom, to: secondTo) { key, _ in
                    keys.append(String(decoding: key.bytes, as: UTF8.self))
                    return true
                }
                for key in keys.dropLast(2) { _ = try tx.delete(key, in: t) }
            }
        } catch {
            thrown = error
        }
        guard case StrataError.corruptPage? = thrown else {
            Issue.record("expected corruptPage, got \(String(describing: thrown))")
            return
        }
        #expect(db.generation == generation) // nothing was committed
    }
}
