import Foundation
import Testing
@testable import StrataCore

/// A cursor of a write transaction positioned again (`first`, `last`, `seek`) after the
/// transaction modified its tree sees the tree as it is now. Found in review: repositioning
/// started from the root the cursor captured when it was made, so it missed new entries, saw half
/// a tree whose root had split, or read another tree that had been given the old root's page.
@Suite struct CursorRepositionTests {
    static func keys(_ cursor: Cursor) throws -> [String] {
        var keys: [String] = []
        guard try cursor.first() else { return keys }
        repeat { keys.append(String(decoding: try cursor.key().bytes, as: UTF8.self)) } while try cursor.next()
        return keys
    }

    @Test func repositioningSeesAnEntryPutAfterTheCursorWasMade() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("a", "1", in: try tx.createTree("t")) }
        try db.write { tx in
            let t = try tx.tree("t")
            let c = try tx.cursor(t)
            try tx.put("b", "2", in: t)
            #expect(try c.first())
            #expect(try c.next())
            #expect(String(decoding: try c.key().bytes, as: UTF8.self) == "b")
            #expect(try c.seek("b"))
            #expect(try c.last())
            #expect(String(decoding: try c.key().bytes, as: UTF8.self) == "b")
        }
    }

    @Test func repositioningAfterTheRootSplitSeesTheWholeTree() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let t = try tx.createTree("t")
            try tx.put("k0000", "v", in: t)
            let c = try tx.cursor(t)
            let all = (0..<400).map { String(format: "k%04d", $0) }
            for key in all { try tx.put(key, [UInt8](repeating: 7, count: 100), in: t) }
            #expect(try tx.record(of: t).depth >= 2)
            #expect(try Self.keys(c) == all)
            #expect(try c.seek("k0399"))
        }
    }

    @Test func repositioningDoesNotReadAnotherTreeGivenTheOldRootPage() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let t = try tx.createTree("t")
            try tx.put("t1", "1", in: t)
            let c = try tx.cursor(t)
            #expect(try tx.delete("t1", in: t)) // the root leaf, made here, is reusable at once
            let u = try tx.createTree("u")
            try tx.put("u1", "1", in: u)
            #expect(try !c.first())
            #expect(try !c.seek("a"))
            #expect(try Self.keys(try tx.cursor(u)) == ["u1"])
        }
    }

    @Test func movingAfterAModificationStillThrowsAndADroppedTreeIsTyped() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let t = try tx.createTree("t")
            try tx.put("a", "1", in: t)
            let c = try tx.cursor(t)
            #expect(try c.first())
            try tx.put("b", "2", in: t)
            #expect(throws: StrataError.self) { try c.next() }
            try tx.dropTree(t)
            #expect(throws: StrataError.treeNotFound(name: "t")) { try c.first() }
        }
    }

    /// Renaming a tree (and creating another under its old name, which reuses its slot) changes
    /// what the cursor's tree handle names without touching a page: repositioning must follow the
    /// handle (found in review: it kept reading the renamed tree's pages, with no error).
    @Test func repositioningAfterARenameFollowsTheHandle() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("a", "1", in: try tx.createTree("T")) }
        try db.write { tx in
            let t = try tx.tree("T")
            let c = try tx.cursor(t)
            #expect(try Self.keys(c) == ["a"])
            try tx.renameTree(t, to: "X")
            #expect(throws: StrataError.treeNotFound(name: "T")) { try c.first() }
            try tx.createTree("T")
            #expect(try tx.get("a", in: t) == nil)
            #expect(try Self.keys(c) == [])
        }
    }
}
