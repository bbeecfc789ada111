import Foundation
import Testing
@testable import StrataCore

/// A key or value a write transaction handed out (a `ByteView` into one of its dirty pages) is a
/// valid argument to that transaction's next modification: `put` and `deleteLeading` read it while
/// they rearrange the very leaf it points into, so they must copy it first. Found in review: the
/// cursor's key put back as a key replaced the wrong entry, a value of the same leaf came out as
/// garbage, and `deleteLeading` compared against a bound its first removal had moved.
@Suite struct AliasedPutTests {
    static var options: DatabaseOptions {
        var options = DatabaseOptions()
        options.pageSize = 4096
        return options
    }

    func store() throws -> (TemporaryDirectory, Database) {
        let dir = TemporaryDirectory()
        return (dir, try Database(path: dir.path, options: Self.options))
    }

    static func string(_ view: ByteView?) -> String? { view.map { String(decoding: $0.bytes, as: UTF8.self) } }

    /// The leaf's own key, passed back as the key: the entry it names is replaced.
    @Test func keyViewOfTheSameLeafReplacesItsEntry() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try db.write { tx in
            let t = try tx.createTree("t")
            try tx.put("a", "1", in: t)
            try tx.put("b", "2", in: t)
            let c = try tx.cursor(t)
            #expect(try c.seek("a"))
            #expect(try tx.put(try c.key(), "new", in: t))
            #expect(Self.string(try tx.get("a", in: t)) == "new")
            #expect(Self.string(try tx.get("b", in: t)) == "2")
            #expect(try tx.count(t) == 2)
        }
        try db.read { tx in
            let t = try tx.tree("t")
            #expect(Self.string(try tx.get("a", in: t)) == "new")
            #expect(Self.string(try tx.get("b", in: t)) == "2")
        }
    }

    /// A value of the same leaf, passed as the value of another key of that leaf.
    @Test func valueViewOfTheSameLeafIsStoredIntact() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try db.write { tx in
            let t = try tx.createTree("t")
            try tx.put("a", "X", in: t)
            try tx.put("b", "BBBBBBBB", in: t)
            try tx.put("a", try #require(try tx.get("b", in: t)), in: t)
            #expect(Self.string(try tx.get("a", in: t)) == "BBBBBBBB")
            #expect(Self.string(try tx.get("b", in: t)) == "BBBBBBBB")
            #expect(try tx.count(t) == 2)
        }
    }

    static func key(_ index: Int) -> String { String(format: "k%02d", index) }
    static func value(_ index: Int) -> [UInt8] { [UInt8](repeating: UInt8(65 + index % 26), count: 120) }

    /// One leaf, 44 bytes from full: thirty nodes of 8 + 3 + 120 bytes and their slots.
    static func fullLeaf(_ tx: WriteTransaction) throws -> Tree {
        let t = try tx.createTree("t")
        for index in 0..<30 { try tx.put(key(index), value(index), in: t) }
        #expect(try tx.record(of: t).leafPages == 1)
        return t
    }

    /// The put splits the leaf the key and the value point into (the split rebuilds it in place).
    @Test func viewsIntoALeafThatSplitsAreStoredIntact() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try db.write { tx in
            let t = try Self.fullLeaf(tx)
            let c = try tx.cursor(t)
            #expect(try c.seek(Self.key(7)))
            let big = [UInt8](repeating: 0x5A, count: 700)
            #expect(try tx.put(try c.key(), big, in: t))
            #expect(try tx.record(of: t).leafPages == 2)
            // And a value of the leaf it splits, under a new key.
            try tx.put("k30", try #require(try tx.get(Self.key(12), in: t)), in: t)
            #expect(try tx.count(t) == 31)
            for index in 0..<30 where index != 7 {
                #expect(try tx.get(Self.key(index), in: t)?.bytes == Self.value(index), "key \(index)")
            }
            #expect(try tx.get(Self.key(7), in: t)?.bytes == big)
            #expect(try tx.get("k30", in: t)?.bytes == Self.value(12))
            var keys: [String] = []
            try tx.scan(t) { key, _ in keys.append(String(decoding: key.bytes, as: UTF8.self)); return true }
            #expect(keys == (0...30).map(Self.key))
        }
    }

    /// The bound is a key of the leaf whose leading nodes `deleteLeading` removes: it is compared
    /// again after that removal repacked the leaf.
    @Test func deleteLeadingBeforeAViewIntoTheLeafItTrims() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try db.write { tx in
            let t = try Self.fullLeaf(tx)
            let c = try tx.cursor(t)
            #expect(try c.seek(Self.key(10)))
            #expect(try tx.deleteLeading(before: try c.key(), in: t) == 10)
            #expect(try tx.count(t) == 20)
            let first = try tx.cursor(t)
            #expect(try first.first())
            #expect(Self.string(try first.key()) == Self.key(10))
        }
    }

    /// The same inside a nested transaction, on a leaf the nested level copied (its own buffer).
    @Test func viewsIntoALeafOfANestedTransaction() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try db.write { tx in
            let t = try tx.createTree("t")
            try tx.put("a", "1", in: t)
            try tx.put("b", "BBBBBBBB", in: t)
            try tx.nested { tx in
                try tx.put("c", "3", in: t) // the nested level's own copy of the leaf
                let c = try tx.cursor(t)
                #expect(try c.seek("a"))
                #expect(try tx.put(try c.key(), "new", in: t))
                try tx.put("c", try #require(try tx.get("b", in: t)), in: t)
                #expect(Self.string(try tx.get("a", in: t)) == "new")
                #expect(Self.string(try tx.get("c", in: t)) == "BBBBBBBB")
                #expect(try tx.count(t) == 3)
            }
            #expect(Self.string(try tx.get("a", in: t)) == "new")
            #expect(Self.string(try tx.get("b", in: t)) == "BBBBBBBB")
            #expect(Self.string(try tx.get("c", in: t)) == "BBBBBBBB")
            #expect(try tx.count(t) == 3)
        }
    }
}
