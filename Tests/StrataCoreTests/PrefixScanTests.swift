import Foundation
import Testing
@testable import StrataCore

/// `Transaction.forEachEntry(withPrefix:in:_:)` shows exactly the entries a `scan` of the
/// prefix's range shows, in order: for ranges inside one leaf, ranges over several leaves,
/// ranges that start in the leaf after the one the descent reaches (checked to occur), a prefix
/// that is a whole key, empty ranges between, before and after all keys, overflow values, an
/// empty tree and a write transaction's dirty pages; it stops when the body says so, and a body
/// that writes, aborts or ends the transaction (in the first leaf or after it) stops it with
/// `misuse`, unless it also stops the walk (then it ends quietly, as a `scan`).
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
    /// an overflow value now and then; in key order.
    private static func entries(groups: Range<Int>, tag: String) -> [(key: String, value: String)] {
        groups.flatMap { group in
            (0..<(group * 7 % 150)).map { entry in
                let length = entry % 37 == 5 ? 9_000 : 20 + (group + entry) % 60
                return (String(format: "g%03d-%04d", group, entry), tag + String(repeating: "v", count: length))
            }
        }
    }

    private static func fill(_ tx: WriteTransaction, _ tree: Tree, groups: Range<Int>, tag: String) throws {
        for (key, value) in entries(groups: groups, tag: tag) { try tx.put(key, value, in: tree) }
    }

    /// What the walk must show for `prefix` in a tree filled with `fill(groups: 0..<60)`, from
    /// the keys as generated (not read back from the tree).
    private static func expected(prefix: String, tag: String) -> [[UInt8]] {
        entries(groups: 0..<60, tag: tag).filter { $0.key.hasPrefix(prefix) }.map { Array($0.key.utf8) + [0xFF] + Array($0.value.utf8) }
    }

    /// The leaf page number each key's descent reaches, in key order.
    private static func leaves(_ tx: Transaction, _ tree: Tree, keys: [String]) throws -> [UInt64] {
        let record = try tx.record(of: tree)
        return try keys.map { key in
            try Array(key.utf8).withUnsafeBytes {
                try tx.access.descend(from: record.root, level: 1, depth: record.depth, towards: .key($0)).leaf.number
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

    /// A prefix that is a whole key shows that entry alone; a prefix that sorts after a leaf's
    /// last key and before the next leaf's first key (the descent ends past the last entry of
    /// the first leaf, so the range starts in the next one) shows exactly the keys it prefixes.
    /// Splits put the shortest prefix of the right leaf's first key that sorts after the left
    /// leaf's last key into the parent, so such a prefix arises once the left leaf's last keys
    /// are deleted (separators stay), as it does in stores whose separators are whole keys.
    @Test func wholeKeyPrefixesAndRangesStartingInTheNextLeaf() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try Self.fill(tx, try tx.createTree("t"), groups: 0..<60, tag: "") }
        let keys = Self.entries(groups: 0..<60, tag: "").map(\.key)
        let leaves = try db.read { tx throws in
            let tree = try tx.tree("t")
            for key in ["g001-0000", "g020-0077", "g059-0000", "g059-0112"] {
                #expect(try Self.walked(tx, tree, prefix: key) == Self.expected(prefix: key, tag: ""), "prefix \(key)")
                #expect(try Self.walked(tx, tree, prefix: key).count == 1, "prefix \(key)")
            }
            return try Self.leaves(tx, tree, keys: keys)
        }
        var startsInTheNextLeaf = 0
        // Leaf boundaries: a key whose descent reaches another leaf than its predecessor's.
        for index in 1..<keys.count where leaves[index] != leaves[index - 1] {
            // The longest common prefix of the two keys, less its last byte (so that it is a
            // proper prefix of both): the left leaf's keys with it are deleted below.
            let last = Array(keys[index - 1].utf8), first = Array(keys[index].utf8)
            let common = zip(last, first).prefix { $0 == $1 }.count
            let prefix = String(decoding: first[..<max(1, common)], as: UTF8.self)
            let deleted = (0..<index).filter { leaves[$0] == leaves[index - 1] && keys[$0].hasPrefix(prefix) }.map { keys[$0] }
            // Leave the left leaf something (an empty leaf would merge away).
            guard deleted.count < leaves.filter({ $0 == leaves[index - 1] }).count else { continue }
            let tx = try db.beginWrite()
            defer { tx.abort() }
            let tree = try tx.tree("t")
            for key in deleted { #expect(try tx.delete(key, in: tree)) }
            let gone = Set(deleted.map { Array($0.utf8) })
            let expected = Self.expected(prefix: prefix, tag: "").filter { !gone.contains(Array($0.prefix { $0 != 0xFF })) }
            #expect(!expected.isEmpty && expected.first!.starts(with: first + [0xFF]), "prefix \(prefix)")
            #expect(try Self.walked(tx, tree, prefix: prefix) == expected, "prefix \(prefix)")
            // Count the boundaries where the descent indeed stops past the left leaf's end.
            let record = try tx.record(of: tree)
            let (leaf, start, _) = try Array(prefix.utf8).withUnsafeBytes {
                try tx.access.descend(from: record.root, level: 1, depth: record.depth, towards: .key($0))
            }
            if start == leaf.count { startsInTheNextLeaf += 1 }
        }
        #expect(startsInTheNextLeaf > 5)
    }

    /// Aborting or ending the transaction inside the body stops the walk with `misuse` (in the
    /// first leaf and after it), and so does a write made after the walk has left the first
    /// leaf (the continuation read by a `TreeScan`).
    @Test func abortEndAndLateWritesInsideAreMisuse() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try Self.fill(tx, try tx.createTree("t"), groups: 0..<60, tag: "") }
        // Group 20: 140 entries over several leaves. Entries the first leaf shows:
        let prefix = "g020-"
        let (inFirstLeaf, total) = try db.read { tx throws in
            let tree = try tx.tree("t")
            let record = try tx.record(of: tree)
            let (leaf, start, _) = try Array(prefix.utf8).withUnsafeBytes {
                try tx.access.descend(from: record.root, level: 1, depth: record.depth, towards: .key($0))
            }
            return (leaf.count - start, try Self.walked(tx, tree, prefix: prefix).count)
        }
        #expect(total == 140)
        #expect(inFirstLeaf > 0 && inFirstLeaf + 3 < total)
        func walk(_ tx: Transaction, _ tree: Tree, change: (Int) throws -> Void) throws -> (calls: Int, error: (any Error)?) {
            var calls = 0
            do {
                try Array(prefix.utf8).withUnsafeBytes { prefix in
                    try tx.forEachEntry(withPrefix: prefix, in: tree) { _, _ in
                        calls += 1
                        try change(calls)
                        return true
                    }
                }
                return (calls, nil)
            } catch {
                return (calls, error)
            }
        }
        func isMisuse(_ error: (any Error)?) -> Bool {
            if case .misuse? = error as? StrataError { return true }
            return false
        }
        for stop in [2, inFirstLeaf + 2] {
            // A write after the walk has left the first leaf (and, for comparison, inside it).
            let writer = try db.beginWrite()
            let tree = try writer.tree("t")
            let written = try walk(writer, tree) { if $0 == stop { try writer.put("g020-0000x", "new", in: tree) } }
            #expect(written.calls == stop && isMisuse(written.error), "write at entry \(stop): \(written)")
            writer.abort()
            // Abort inside the body.
            let aborted = try db.beginWrite()
            let abortedResult = try walk(aborted, try aborted.tree("t")) { if $0 == stop { aborted.abort() } }
            #expect(abortedResult.calls == stop && isMisuse(abortedResult.error), "abort at entry \(stop): \(abortedResult)")
            // End of a read transaction inside the body.
            let reader = try db.beginRead()
            let ended = try walk(reader, try reader.tree("t")) { if $0 == stop { reader.end() } }
            #expect(ended.calls == stop && isMisuse(ended.error), "end at entry \(stop): \(ended)")
        }
        // Nothing was written.
        #expect(try db.read { tx throws in try tx.get("g020-0000x", in: try tx.tree("t")) == nil })
    }

    /// A body that writes and then stops the walk (returns false) ends it quietly, in the first
    /// leaf as after it, as a `scan` does: no page is read after the change.
    @Test func aWriteWithTheLastEntryShownEndsQuietly() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try Self.fill(tx, try tx.createTree("t"), groups: 0..<60, tag: "") }
        for stop in [2, 100] {
            try db.write { tx throws in
                let tree = try tx.tree("t")
                var calls = 0
                try Array("g020-".utf8).withUnsafeBytes { prefix in
                    try tx.forEachEntry(withPrefix: prefix, in: tree) { _, _ in
                        calls += 1
                        guard calls == stop else { return true }
                        try tx.put("g020-0000x", "new", in: tree)
                        return false
                    }
                }
                #expect(calls == stop)
                // The same through a scan, for comparison.
                calls = 0
                try tx.scan(tree, from: Array("g020-".utf8)) { _, _ in
                    calls += 1
                    guard calls == stop else { return true }
                    try tx.put("g020-0000y", "new", in: tree)
                    return false
                }
                #expect(calls == stop)
            }
        }
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
