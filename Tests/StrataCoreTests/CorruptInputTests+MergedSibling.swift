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
        try db.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<600 { try tx.put(String(format: "key %05d", i), "value \(i)", in: t) }
            try tx.put("later", "commit", in: try tx.createTree("c"))
        }
        // The last commit rewrites the first leaf: the writer keeps its new copy in memory.
        try db.write { tx in try tx.put("key 00000", "changed", in: try tx.tree("t")) }
        let (root, pageSize, pageChecksum) = try db.read { tx in
            let record = try tx.record(of: try tx.tree("t"))
            try #require(record.depth == 2)
            return (record.root, tx.database.pageSize, tx.database.pageChecksum)
        }
        let data = dir.path + "/data"
        func slot(_ index: Int, of page: [UInt8]) -> Int {
            Int(page[PageLayout.headerSize + 2 * index..<PageLayout.headerSize + 2 * index + 2].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) })
        }
        func load16(_ page: [UInt8], _ offset: Int) -> Int {
            Int(page[offset..<offset + 2].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) })
        }
        // Branch nodes: u64 child, u16 key length, key. Leaf 0 is the one the last commit wrote;
        // the keys of leaf 1 run from the separator of node 1 up to that of node 2.
        let rootPage = try read(data, at: root * UInt64(pageSize), count: pageSize)
        try #require(load16(rootPage, PageLayout.countOffset) >= 3)
        func node(_ index: Int) -> (child: UInt64, key: String) {
            let start = slot(index, of: rootPage)
            let child = rootPage[start..<start + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let length = load16(rootPage, start + 8)
            return (child, String(decoding: rootPage[(start + 10)..<(start + 10 + length)], as: UTF8.self))
        }
        let firstLeaf = node(0).child
        let (secondFrom, secondTo) = (node(1).key, node(2).key)
        // Forge the first leaf's header in the file: one node and a heap of 16 bytes, so it looks
        // nearly empty (the header stays plausible; the slot is not looked at).
        var page = try read(data, at: firstLeaf * UInt64(pageSize), count: pageSize)
        try #require(page[PageLayout.kindOffset] == PageKind.leaf.rawValue)
        withUnsafeBytes(of: UInt16(1)) { page.replaceSubrange(PageLayout.countOffset..<PageLayout.countOffset + 2, with: $0) }
        withUnsafeBytes(of: UInt16(PageLayout.headerSize + 2)) { page.replaceSubrange(PageLayout.lowerOffset..<PageLayout.lowerOffset + 2, with: $0) }
        withUnsafeBytes(of: UInt16(pageSize - 16)) { page.replaceSubrange(PageLayout.upperOffset..<PageLayout.upperOffset + 2, with: $0) }
        let checksum = page.withUnsafeBytes { pageChecksum.of($0.baseAddress!, byteCount: pageSize) }
        withUnsafeBytes(of: checksum) { page.replaceSubrange(PageLayout.checksumOffset..<PageLayout.checksumOffset + 8, with: $0) }
        try patch(data, at: firstLeaf * UInt64(pageSize), page)

        // Emptying most of the second leaf makes it merge with its left sibling, the forged one.
        let generation = db.generation
        var thrown: (any Error)?
        do {
            try db.write { tx in
                let t = try tx.tree("t")
                var keys: [String] = []
                try tx.scan(t, from: Array(secondFrom.utf8), to: Array(secondTo.utf8)) { key, _ in
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
