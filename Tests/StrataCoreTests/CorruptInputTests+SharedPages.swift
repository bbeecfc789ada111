import Foundation
import Testing
@testable import StrataCore

/// A forged file whose tree names one page twice (a branch with children [L, L], checksums
/// resealed): freeing that page twice would commit a free list that names it twice, which either
/// fails every later load of that record (the store can no longer write) or, with the copies in
/// different records, hands the page out twice. The transaction must fail with `corruptPage`
/// before anything is committed, and the store must stay writable.
extension CorruptInputTests {
    /// A store whose tree "t" (depth 2) has a root whose second child is forged to be its first.
    /// Returns the directory and the key of the root's second slot (it routes to the forged child).
    func storeWithALeafReferencedTwice() throws -> (TemporaryDirectory, [UInt8]) {
        let dir = TemporaryDirectory()
        let (root, pages) = try { () throws -> (UInt64, ForgeablePages) in
            let db0 = try Database(path: dir.path)
            defer { db0.close() }
            return try commitDepthTwoTree(db0)
        }()
        var page = try pages.read(root)
        let first = ForgeablePages.branchNode(0, of: page), second = ForgeablePages.branchNode(1, of: page)
        page.replaceSubrange(second.offset..<second.offset + 8, with: page[first.offset..<first.offset + 8])
        try pages.write(page, at: root)
        return (dir, second.key)
    }

    static func isCorruptPage(_ error: any Error) -> Bool {
        if case StrataError.corruptPage = error { return true }
        return false
    }

    /// Later commits (enough for the failed one's records to become reusable and be loaded) work.
    func expectStillWritable(_ db: Database) throws {
        for round in 0..<6 {
            try db.write { tx in
                let d = try tx.openOrCreateTree("d")
                for i in 0..<200 { try tx.put(String(format: "r%d-%04d", round, i), [UInt8](repeating: 1, count: 60), in: d) }
                if round > 0 { _ = try tx.deleteLeading(before: Array("r\(round)".utf8), in: d) }
            }
        }
        try db.read { tx throws in
            #expect(try tx.count(try tx.tree("d")) == 200)
            #expect(try tx.string("later", in: try tx.tree("c")) == "commit")
        }
    }

    @Test func droppingATreeThatNamesALeafTwiceFailsBeforeCommitting() throws {
        let (dir, _) = try storeWithALeafReferencedTwice()
        let db = try Database(path: dir.path)
        defer { db.close() }
        #expect(performing: { try db.write { tx in try tx.dropTree(try tx.tree("t")) } }, throws: Self.isCorruptPage)
        try db.read { tx throws in _ = try tx.tree("t") } // nothing was committed
        try expectStillWritable(db)
    }

    @Test func copyingALeafReachedTwiceFailsBeforeCommitting() throws {
        let (dir, routedKey) = try storeWithALeafReferencedTwice()
        let db = try Database(path: dir.path)
        defer { db.close() }
        #expect(performing: {
            try db.write { tx in
                let t = try tx.tree("t")
                try tx.put("key 00000", "first copy", in: t)
                try tx.put(routedKey, "second copy", in: t) // the same leaf, through the forged slot
            }
        }, throws: Self.isCorruptPage)
        try db.read { tx throws in #expect(try tx.string("key 00000", in: try tx.tree("t")) == "value 0") }
        try expectStillWritable(db)
    }
}
