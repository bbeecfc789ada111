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
        let (root, pageSize, pageChecksum) = try { () throws -> (UInt64, Int, PageChecksum) in
            let db0 = try Database(path: dir.path)
            defer { db0.close() }
            try db0.write { tx in
                let t = try tx.createTree("t")
                for i in 0..<600 { try tx.put(String(format: "key %05d", i), "value \(i)", in: t) }
            }
            // A later commit elsewhere: the forged leaf is not a page the newest commit wrote
            // (opening would find that commit's pages altered and open at the one before).
            try db0.write { tx in try tx.put("later", "commit", in: try tx.createTree("c")) }
            return try db0.read { tx in
                let record = try tx.record(of: try tx.tree("t"))
                try #require(record.depth == 2)
                return (record.root, tx.database.pageSize, tx.database.pageChecksum)
            }
        }()
        let data = dir.path + "/data"
        func slot(_ index: Int, of page: [UInt8]) -> Int {
            Int(page[PageLayout.headerSize + 2 * index..<PageLayout.headerSize + 2 * index + 2].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) })
        }
        // The root's first child (a branch node: u64 child, u16 key length, key).
        let rootPage = try read(data, at: root * UInt64(pageSize), count: pageSize)
        let first = slot(0, of: rootPage)
        let leaf = rootPage[first..<first + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        var page = try read(data, at: leaf * UInt64(pageSize), count: pageSize)
        try #require(page[PageLayout.kindOffset] == PageKind.leaf.rawValue)
        let slotOne = PageLayout.headerSize + 2
        page.replaceSubrange(slotOne..<slotOne + 2, with: page[PageLayout.headerSize..<PageLayout.headerSize + 2])
        let checksum = page.withUnsafeBytes { pageChecksum.of($0.baseAddress!, byteCount: pageSize) }
        withUnsafeBytes(of: checksum) { page.replaceSubrange(PageLayout.checksumOffset..<PageLayout.checksumOffset + 8, with: $0) }
        try patch(data, at: leaf * UInt64(pageSize), page)
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
