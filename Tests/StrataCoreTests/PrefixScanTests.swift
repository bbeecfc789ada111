import Foundation
import Testing
@testable import StrataCore

/// `Transaction.forEachEntry(withPrefix:in:_:)` shows exactly the entries a `scan` of the
/// prefix's range shows, in order: for ranges inside one leaf, ranges over several leaves,
/// ranges that start in the leaf after the one the descent reaches, empty ranges between, before
/// and after all keys, overflow values, an empty tree and a write transaction's dirty pages; it
/// stops when the body says so, and a body that changes the transaction stops it with `misuse`.
@Suite struct PrefixScanTests {
    /// The entries `scan` shows for keys starting with `prefix` (ASCII, no 0xFF byte).
    private static func scanned(_ tx: Transaction, _ tree: Tree, prefix: String) throws -> [[UInt8]] {
        var upper = Array(prefix.utf8)
        upper[upper.count - 1] += 1
        var found: [[UInt8]] = []
        try tx.scan(tree, from: Array(prefix.utf8), to: upper) { key, value in
            found.append(key.bytes + [0xFF] + value.bytes)
            return true
        }
        return found
    }

    private static func walked(_ tx: Transaction, _ tree: Tree, prefix: String) throws -> [[UInt8]] {
        var found: [[UInt8]] = []
        try Array(prefix.utf8).withUnsafeBytes { prefix in
            try tx.forEachEntry(withPrefix: prefix, in: tree) { key, value in
                found.append(Array(key) + [0xFF] + Array(value))
                return true
            }
        }
        return found
    }

    /// Group `g` holds `g * 7 % 150` entries (none for some), with values of varied length and
    /// an overflow value now and then.
    private static func fill(_ tx: WriteTransaction, _ tree: Tree, groups: Range<Int>, tag: String) throws {
        for group in groups {
            for entry in 0..<(group * 7 % 150) {
                let length = entry % 37 == 5 ? 9_000 : 20 + (group + entry) % 60
                try tx.put(String(format: "g%03d-%04d", group, entry), tag + String(repeating: "v", count: length), in: tree)
            }
        }
    }

    private static let prefixes = (0..<60).map { String(format: "g%03d-", $0) } + ["g", "a", "z", "g05", "g059-00", "g000-"]

    @Test func matchesTheScanOfThePrefixRange() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            let tree = try tx.createTree("t")
            try Self.fill(tx, tree, groups: 0..<60, tag: "stored ")
            _ = try tx.createTree("empty")
            #expect(try tx.record(of: tree).depth >= 2)
        }
        try db.read { tx throws in
            let tree = try tx.tree("t")
            var nonEmpty = 0
            for prefix in Self.prefixes {
                let expected = try Self.scanned(tx, tree, prefix: prefix)
                #expect(try Self.walked(tx, tree, prefix: prefix) == expected, "prefix \(prefix)")
                if !expected.isEmpty { nonEmpty += 1 }
            }
            #expect(nonEmpty > 40)
            #expect(try Self.walked(tx, try tx.tree("empty"), prefix: "g").isEmpty)
        }
        // Dirty pages: half the groups rewritten in this transaction.
        try db.write { tx throws in
            let tree = try tx.tree("t")
            try Self.fill(tx, tree, groups: 0..<30, tag: "dirty ")
            for prefix in Self.prefixes {
                #expect(try Self.walked(tx, tree, prefix: prefix) == Self.scanned(tx, tree, prefix: prefix), "prefix \(prefix)")
            }
        }
    }

    @Test func stopsWhenAskedAndRefusesChangesInside() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try Self.fill(tx, try tx.createTree("t"), groups: 0..<60, tag: "") }
        try db.read { tx throws in
            var shown = 0
            try Array("g050-".utf8).withUnsafeBytes { prefix in
                try tx.forEachEntry(withPrefix: prefix, in: try tx.tree("t")) { _, _ in
                    shown += 1
                    return shown < 3
                }
            }
            #expect(shown == 3)
        }
        let tx = try db.beginWrite()
        let tree = try tx.tree("t")
        var calls = 0
        #expect(throws: StrataError.self) {
            try Array("g050-".utf8).withUnsafeBytes { prefix in
                try tx.forEachEntry(withPrefix: prefix, in: tree) { _, _ in
                    calls += 1
                    if calls == 2 { try tx.put("g050-0000x", "new", in: tree) }
                    return true
                }
            }
        }
        #expect(calls == 2)
        tx.abort()
    }

    /// Keys laid end to end in one buffer answer like one `get` per key; a width that does not
    /// divide the buffer is misuse.
    @Test func fixedWidthKeysAnswerLikeSingleGets() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            let tree = try tx.createTree("t")
            for i in stride(from: 0, to: 6_000, by: 2) { try tx.put(String(format: "k%05d", i), "value \(i)", in: tree) }
        }
        try db.read { tx throws in
            let tree = try tx.tree("t")
            let probes = (0..<200).map { String(format: "k%05d", ($0 * 7919) % 6_100) }
            let buffer = Array(probes.joined().utf8)
            var positions: [Int] = []
            var present = 0
            try buffer.withUnsafeBytes { keys in
                try tx.forEachValue(ofKeysIn: keys, width: 6, in: tree) { position, value in
                    positions.append(position)
                    let single = try tx.get(probes[position], in: tree)
                    #expect(value?.bytes == single?.bytes, "\(probes[position])")
                    if value != nil { present += 1 }
                }
                #expect(throws: StrataError.self) { try tx.forEachValue(ofKeysIn: keys, width: 7, in: tree) { _, _ in } }
                #expect(throws: StrataError.self) { try tx.forEachValue(ofKeysIn: keys, width: 0, in: tree) { _, _ in } }
            }
            #expect(positions == Array(probes.indices))
            #expect(present > 50 && present < 200)
        }
    }
}
