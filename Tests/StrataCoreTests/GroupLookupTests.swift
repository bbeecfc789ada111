import Foundation
import Testing
@testable import StrataCore

/// `Transaction.forEachValue(of:in:_:)` answers exactly like one `get` per key, in the order of
/// the keys, across group boundaries (more keys than `PageAccess.groupLookupSize`), for keys in
/// any order and repeated, missing keys, trees of one leaf and of several levels, an empty tree,
/// no keys at all, and inside a write transaction (dirty pages); an error thrown by the caller
/// stops it.
@Suite struct GroupLookupTests {
    private struct Stop: Error {}

    /// The values of `tree`, in key order, as views (the probe keys of a test).
    private static func values(of tree: Tree, in tx: Transaction) throws -> [ByteView] {
        var values: [ByteView] = []
        try tx.scan(tree) { _, value in
            values.append(value)
            return true
        }
        return values
    }

    @discardableResult
    private func check(_ tx: Transaction, keys: [ByteView], tree: Tree) throws -> Int {
        var positions: [Int] = []
        var present = 0
        try tx.forEachValue(of: keys, in: tree) { position, value in
            positions.append(position)
            let single = try tx.get(keys[position], in: tree)
            #expect(value?.bytes == single?.bytes, "\(keys[position])")
            if value != nil { present += 1 }
        }
        #expect(positions == Array(keys.indices))
        return present
    }

    /// A tree of depth 3 or more (two branch levels walked per key): found values match `get`,
    /// and most probes are present.
    @Test func matchesSingleGetsInADeepTree() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            let tree = try tx.createTree("t")
            for i in 0..<40_000 { try tx.put(String(format: "key-%07d", i), String(repeating: "v", count: 40), in: tree) }
            #expect(try tx.record(of: tree).depth >= 3)
        }
        try db.write { tx throws in
            let tree = try tx.tree("t")
            let probes = try tx.createTree("probes")
            for i in 0..<500 { try tx.put(String(format: "%05d", i), String(format: "key-%07d", (i * 7919) % 41_000), in: probes) }
            let keys = try Self.values(of: probes, in: tx)
            #expect(try check(tx, keys: keys, tree: tree) > 400)
        }
    }

    /// A callback that writes, or ends the transaction, stops the lookups with `misuse` before
    /// any more pages are read (the remembered leaves may have moved or been recycled).
    @Test func changingTheTransactionInsideTheCallbackIsMisuse() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            let tree = try tx.createTree("t")
            for i in 0..<3_000 { try tx.put(String(format: "k%05d", i), "value \(i)", in: tree) }
            let probes = try tx.createTree("probes")
            for i in 0..<100 { try tx.put(String(format: "%03d", i), String(format: "k%05d", i * 29), in: probes) }
        }
        func probeKeys(_ tx: Transaction) throws -> [ByteView] { try Self.values(of: try tx.tree("probes"), in: tx) }
        let tx = try db.beginWrite()
        let tree = try tx.tree("t")
        var keys = try probeKeys(tx)
        var calls = 0
        #expect(throws: StrataError.self) {
            try tx.forEachValue(of: keys, in: tree) { _, _ in
                calls += 1
                if calls == 3 { try tx.put("k00000-new", String(repeating: "x", count: 900), in: tree) }
            }
        }
        #expect(calls == 3)
        tx.abort()
        let reader = try db.beginRead()
        keys = try probeKeys(reader)
        calls = 0
        #expect(throws: StrataError.self) {
            try reader.forEachValue(of: keys, in: try reader.tree("t")) { _, _ in
                calls += 1
                if calls == 2 { reader.end() }
            }
        }
        #expect(calls == 2)
    }

    @Test func matchesSingleGets() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        var generator = SystemRandomNumberGenerator()
        let probes = (0..<300).map { _ in String(format: "k%05d", Int.random(in: 0..<5100, using: &generator)) } + ["", "a", "zzz", "k00002"]
        try db.write { tx throws in
            let deep = try tx.createTree("deep")
            for i in stride(from: 0, to: 5000, by: 2) { try tx.put(String(format: "k%05d", i), "value \(i) " + String(repeating: "v", count: i % 50), in: deep) }
            let small = try tx.createTree("small")
            for i in 0..<5 { try tx.put(String(format: "k%05d", i), "small \(i)", in: small) }
            _ = try tx.createTree("empty")
            // The probe keys as views: values of a tree of their own, unsorted and repeated.
            let p = try tx.createTree("probes")
            for (index, probe) in probes.enumerated() { try tx.put(String(format: "%05d", index), probe, in: p) }
            #expect(try tx.record(of: deep).depth >= 2)
        }
        try db.read { tx throws in
            let views = try Self.values(of: try tx.tree("probes"), in: tx)
            #expect(views.count == probes.count)
            #expect(try check(tx, keys: views, tree: try tx.tree("deep")) > 0)
            #expect(try check(tx, keys: views, tree: try tx.tree("small")) > 0)
            #expect(try check(tx, keys: views, tree: try tx.tree("empty")) == 0)
            try check(tx, keys: [], tree: try tx.tree("deep"))
            var calls = 0
            #expect(throws: Stop.self) {
                try tx.forEachValue(of: views, in: try tx.tree("deep")) { _, _ in
                    calls += 1
                    if calls == 40 { throw Stop() }
                }
            }
            #expect(calls == 40)
        }
        try db.write { tx throws in
            let deep = try tx.tree("deep")
            for i in stride(from: 1, to: 400, by: 2) { try tx.put(String(format: "k%05d", i), "new \(i)", in: deep) }
            let p = try tx.createTree("dirty-probes")
            for i in 0..<400 { try tx.put(String(format: "%05d", i), String(format: "k%05d", (i * 7) % 420), in: p) }
            // Views into this transaction's dirty pages: valid while nothing more is written.
            let keys = try Self.values(of: p, in: tx)
            #expect(keys.count == 400)
            try check(tx, keys: keys, tree: deep)
        }
    }
}
