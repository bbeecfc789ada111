import Foundation
import Testing
@testable import StrataCore

/// `withValue(forKey:...)` and `withFirstEntry(atOrAfter:...)` on a `ReadSnapshot` and a
/// `Transaction` lend exactly what `get` and `firstEntry` return as views: for present and
/// missing keys, the least key after each leaf's last key (checked to land past the leaf's end:
/// the entry starts the next leaf, the scan path), past every key, overflow values, an empty
/// tree, a missing tree, and a write transaction's dirty pages, each body called exactly once.
/// A snapshot used after its `withSnapshot` call is `misuse`, and so is a transaction's body
/// that writes or aborts it.
@Suite struct LendingLookupTests {
    private static func fill(_ tx: WriteTransaction) throws {
        let tree = try tx.createTree("t")
        for i in stride(from: 0, to: 6000, by: 2) {
            // Every 97th value is larger than a page: an overflow run.
            let value = i % 97 == 0 ? String(repeating: "o", count: 9000) : "value \(i) " + String(repeating: "v", count: i % 70)
            try tx.put(String(format: "k%05d", i), value, in: tree)
        }
        _ = try tx.createTree("empty")
    }

    /// Probe keys: present, missing between two keys, before and after all keys, and just past
    /// each leaf's last key (the leaves found by descending to every key, as `PrefixScanTests`
    /// does): that key followed by a zero byte, the least key after it, which the descent places
    /// past the end of the leaf, so the entry lent starts the next leaf (the scan path). Checks
    /// that many probes do land there.
    private static func probes(_ tx: Transaction, generator: inout SeededGenerator) throws -> [[UInt8]] {
        var keys: [[UInt8]] = [[], Array("a".utf8), Array("k".utf8), Array("k99999".utf8), Array("zzz".utf8)]
        for _ in 0..<400 { keys.append(Array(String(format: "k%05d", Int.random(in: 0..<6100, using: &generator)).utf8)) }
        let tree = try tx.tree("t")
        let record = try tx.record(of: tree)
        func descend(_ key: [UInt8]) throws -> (leaf: UInt64, index: Int, count: Int) {
            let (leaf, index, _) = try key.withUnsafeBytes {
                try tx.access.descend(from: record.root, level: 1, depth: record.depth, towards: .key($0))
            }
            return (leaf.number, index, leaf.count)
        }
        var stored: [[UInt8]] = []
        try tx.scan(tree) { key, _ in stored.append(key.bytes); return true }
        let leaves = try stored.map { try descend($0).leaf }
        var pastLeafEnd = 0
        for index in 1..<stored.count where leaves[index] != leaves[index - 1] {
            let probe = stored[index - 1] + [0]
            keys.append(probe)
            let reached = try descend(probe)
            if reached.leaf == leaves[index - 1] && reached.index == reached.count { pastLeafEnd += 1 }
        }
        #expect(pastLeafEnd > 10)
        return keys
    }

    private typealias Lent = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)?

    /// Whether the lent value and entry of `key` are the bytes of the views `view` and `entry`.
    private static func expectSame(key: [UInt8], view: ByteView?, entry: (key: ByteView, value: ByteView)?, _ label: String,
                                   lendValue: (UnsafeRawBufferPointer, (UnsafeRawBufferPointer?) throws -> Void) throws -> Void,
                                   lendEntry: (UnsafeRawBufferPointer, (Lent) throws -> Void) throws -> Void) throws {
        // `.none` until `body` runs: "never called" differs from "called with nil".
        var lent: [UInt8]?? = .none
        var calls = 0
        try key.withUnsafeBytes { raw in try lendValue(raw) { calls += 1; lent = .some($0.map { Array($0) }) } }
        #expect(calls == 1, "\(label) \(key)")
        #expect(lent == .some(view?.bytes), "\(label) \(key)")
        var lentEntry: ([UInt8], [UInt8])?? = .none
        calls = 0
        try key.withUnsafeBytes { raw in try lendEntry(raw) { calls += 1; lentEntry = .some($0.map { (Array($0.key), Array($0.value)) }) } }
        #expect(calls == 1, "\(label) \(key)")
        #expect(lentEntry.map { $0?.0 } == .some(entry?.key.bytes), "\(label) \(key)")
        #expect(lentEntry.map { $0?.1 } == .some(entry?.value.bytes), "\(label) \(key)")
    }

    private static func check(_ tx: Transaction, keys: [[UInt8]], tree: Tree) throws -> Int {
        var present = 0
        for key in keys {
            let view = try tx.get(key, in: tree)
            if view != nil { present += 1 }
            try expectSame(key: key, view: view, entry: try tx.firstEntry(atOrAfter: key, in: tree), "transaction",
                           lendValue: { try tx.withValue(forKey: $0, in: tree, $1) },
                           lendEntry: { try tx.withFirstEntry(atOrAfter: $0, in: tree, $1) })
        }
        return present
    }

    @Test func lendsWhatTheViewsShow() throws {
        var generator = SeededGenerator(seed: testSeed("lending lookups"))
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try Self.fill(tx) }
        try db.read { tx throws in
            let keys = try Self.probes(tx, generator: &generator)
            #expect(try tx.record(of: try tx.tree("t")).depth >= 2)
            #expect(try Self.check(tx, keys: keys, tree: try tx.tree("t")) > 100)
            #expect(try Self.check(tx, keys: keys, tree: try tx.tree("empty")) == 0)
            // The snapshot forms, by tree name (a missing tree lends nil).
            try db.withSnapshot { snapshot in
                for key in keys {
                    for name in ["t", "empty", "missing"] {
                        try Self.expectSame(key: key, view: try snapshot.get(key, inTree: name),
                                            entry: try snapshot.firstEntry(atOrAfter: key, inTree: name), name,
                                            lendValue: { try snapshot.withValue(forKey: $0, inTree: name, $1) },
                                            lendEntry: { try snapshot.withFirstEntry(atOrAfter: $0, inTree: name, $1) })
                    }
                }
            }
        }
        // Inside a write transaction, after changes (dirty pages).
        try db.write { tx throws in
            let tree = try tx.tree("t")
            for i in stride(from: 1, to: 6000, by: 7) { try tx.put(String(format: "k%05d", i), "new \(i)", in: tree) }
            let keys = try Self.probes(tx, generator: &generator)
            #expect(try Self.check(tx, keys: keys, tree: tree) > 100)
        }
        // A snapshot kept past its call.
        var kept: ReadSnapshot?
        try db.withSnapshot { kept = $0 }
        let key: [UInt8] = Array("k00002".utf8)
        #expect(throws: StrataError.self) { try key.withUnsafeBytes { raw in try kept!.withValue(forKey: raw, inTree: "t") { _ in } } }
        #expect(throws: StrataError.self) { try key.withUnsafeBytes { raw in try kept!.withFirstEntry(atOrAfter: raw, inTree: "t") { _ in } } }
    }

    /// A body that changes the transaction (a put, an abort) is `misuse` once it returns: on the
    /// value path, on an entry inside a leaf and on one that starts the next leaf. Each body runs
    /// once.
    @Test func changingTheTransactionInsideTheBodyIsMisuse() throws {
        var generator = SeededGenerator(seed: testSeed("lending lookup misuse"))
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try Self.fill(tx) }
        func isMisuse(_ error: StrataError?) -> Bool {
            if case .misuse? = error { return true }
            return false
        }
        let tx = try db.beginWrite()
        let tree = try tx.tree("t")
        // The last probe is the least key after a leaf's last key (the next-leaf path).
        let leafEnd = try Self.probes(tx, generator: &generator).last!
        var calls = 0
        for (round, key) in [Array("k00002".utf8), Array("k00003".utf8), leafEnd].enumerated() {
            calls = 0
            let valueError = #expect(throws: StrataError.self) {
                try key.withUnsafeBytes { raw in
                    try tx.withValue(forKey: raw, in: tree) { _ in calls += 1; try tx.put("new value \(round)", "x", in: tree) }
                }
            }
            #expect(isMisuse(valueError) && calls == 1, "withValue \(key): \(String(describing: valueError))")
            calls = 0
            let entryError = #expect(throws: StrataError.self) {
                try key.withUnsafeBytes { raw in
                    try tx.withFirstEntry(atOrAfter: raw, in: tree) { _ in calls += 1; try tx.put("new entry \(round)", "x", in: tree) }
                }
            }
            #expect(isMisuse(entryError) && calls == 1, "withFirstEntry \(key): \(String(describing: entryError))")
        }
        // An abort inside the body.
        let abortError = #expect(throws: StrataError.self) {
            try leafEnd.withUnsafeBytes { raw in try tx.withFirstEntry(atOrAfter: raw, in: tree) { _ in tx.abort() } }
        }
        #expect(isMisuse(abortError), "\(String(describing: abortError))")
    }
}
