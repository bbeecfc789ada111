import Foundation
import Testing
@testable import StrataCore

/// `Transaction.referencedKeys(in:...)` and `forEachValue(of:in:_:)` (a range of index entries
/// read as the keys they name, then looked up in groups) answer exactly like a scan of the index
/// and one `get` per named key: in both orders, with limits, empty ranges, missing targets, an
/// empty target tree, across group boundaries of a deep tree, and inside a write transaction
/// (dirty pages). A change of the transaction between the two steps or inside the callback, its
/// end, keys of another transaction and an offset outside the key are `misuse`.
@Suite struct ReferencedKeysTests {
    private struct Stop: Error {}

    /// The index maps "i<4 digits>|" + target key to nothing; every seventh target is missing.
    private static func fill(_ tx: WriteTransaction, entries: Int) throws {
        let target = try tx.createTree("target")
        let index = try tx.createTree("index")
        for i in 0..<entries {
            let key = String(format: "key-%06d", (i * 7919) % (entries * 2))
            if i % 7 != 0 { try tx.put(key, "value of \(key) " + String(repeating: "v", count: i % 60), in: target) }
            try tx.put(String(format: "i%04d|", i % 5000) + key, "", in: index)
        }
        _ = try tx.createTree("empty")
    }

    /// A store holding `fill(_:entries:)`; keep the directory while the store is used.
    private static func store(entries: Int) throws -> (TemporaryDirectory, Database) {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try fill(tx, entries: entries) }
        return (dir, db)
    }

    private static func isMisuse(_ error: StrataError?) -> Bool {
        if case .misuse? = error { return true }
        return false
    }

    /// Where the named key starts: after the '|'.
    private static func referenceStart(_ key: UnsafeRawBufferPointer) -> Int { (key.firstIndex(of: UInt8(ascii: "|")) ?? -1) + 1 }

    /// The expected answer: (named key, value) per index entry in range, by scan and `get`.
    private static func expected(_ tx: Transaction, lower: [UInt8]?, upper: [UInt8]?, reverse: Bool, limit: Int,
                                 target: Tree) throws -> [([UInt8], [UInt8]?)] {
        var answer: [([UInt8], [UInt8]?)] = []
        guard limit > 0 else { return [] }
        try tx.scan(try tx.tree("index"), from: lower, to: upper, reverse: reverse) { key, _ in
            let named = Array(key.bytes[referenceStart(key.buffer)...])
            answer.append((named, try tx.get(named, in: target)?.bytes))
            return answer.count < limit
        }
        return answer
    }

    private static func joined(_ tx: Transaction, lower: [UInt8]?, upper: [UInt8]?, reverse: Bool, limit: Int,
                               target: Tree) throws -> [([UInt8], [UInt8]?)] {
        let keys = try tx.referencedKeys(in: try tx.tree("index"), from: lower, to: upper, reverse: reverse, limit: limit,
                                         referenceStart: referenceStart)
        var answer: [([UInt8], [UInt8]?)] = []
        try tx.forEachValue(of: keys, in: target) { position, key, value in
            #expect(position == answer.count)
            answer.append((Array(key), value.map { Array($0) }))
        }
        #expect(answer.count == keys.count)
        return answer
    }

    private static func checkRanges(_ tx: Transaction, target: Tree, generator: inout SeededGenerator) throws {
        for round in 0..<60 {
            var bounds = [Int.random(in: 0..<5200, using: &generator), Int.random(in: 0..<5200, using: &generator)].sorted()
            if round % 10 == 0 { bounds[1] = bounds[0] }
            let lower: [UInt8]? = round % 9 == 1 ? nil : Array(String(format: "i%04d", bounds[0]).utf8)
            let upper: [UInt8]? = round % 9 == 2 ? nil : Array(String(format: "i%04d", bounds[1]).utf8)
            let limit = round % 3 == 0 ? Int.random(in: 0...50, using: &generator) : Int.max
            for reverse in [false, true] {
                let want = try expected(tx, lower: lower, upper: upper, reverse: reverse, limit: limit, target: target)
                let got = try joined(tx, lower: lower, upper: upper, reverse: reverse, limit: limit, target: target)
                #expect(got.map(\.0) == want.map(\.0), "round \(round) reverse \(reverse)")
                #expect(got.map(\.1) == want.map(\.1), "round \(round) reverse \(reverse)")
            }
        }
    }

    @Test func matchesAScanAndSingleGets() throws {
        let seed = testSeed("referenced keys")
        var generator = SeededGenerator(seed: seed)
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try Self.fill(tx, entries: 12_000) }
        try db.read { tx throws in
            let target = try tx.tree("target")
            #expect(try tx.record(of: target).depth >= 2)
            try Self.checkRanges(tx, target: target, generator: &generator)
            // Everything, and an empty target tree (every value missing).
            let all = try Self.joined(tx, lower: nil, upper: nil, reverse: false, limit: .max, target: target)
            #expect(all.count == 12_000)
            #expect(all.filter { $0.1 == nil }.count == 12_000 / 7 + 1)
            let none = try Self.joined(tx, lower: nil, upper: nil, reverse: false, limit: .max, target: try tx.tree("empty"))
            #expect(none.count == 12_000 && none.allSatisfy { $0.1 == nil })
        }
        // Inside a write transaction, after changes (the pages read are dirty).
        try db.write { tx throws in
            let target = try tx.tree("target")
            for i in stride(from: 0, to: 24_000, by: 3) { try tx.put(String(format: "key-%06d", i), "changed \(i)", in: target) }
            try Self.checkRanges(tx, target: target, generator: &generator)
        }
    }

    @Test func changesBetweenOrInsideTheStepsAreMisuse() throws {
        let (dir, db) = try Self.store(entries: 3_000)
        defer { withExtendedLifetime(dir) {} }
        // A write between collecting and looking up.
        let tx = try db.beginWrite()
        let target = try tx.tree("target")
        var keys = try tx.referencedKeys(in: try tx.tree("index"), from: nil, to: nil, reverse: false, limit: .max,
                                         referenceStart: Self.referenceStart)
        try tx.put("key-new", "x", in: target)
        var calls = 0
        let between = #expect(throws: StrataError.self) { try tx.forEachValue(of: keys, in: target) { _, _, _ in calls += 1 } }
        #expect(Self.isMisuse(between) && calls == 0, "\(String(describing: between))")
        // A write inside the callback stops the lookups at once.
        keys = try tx.referencedKeys(in: try tx.tree("index"), from: nil, to: nil, reverse: false, limit: .max,
                                     referenceStart: Self.referenceStart)
        let inside = #expect(throws: StrataError.self) {
            try tx.forEachValue(of: keys, in: target) { _, _, _ in
                calls += 1
                if calls == 3 { try tx.put("key-000000-new", String(repeating: "x", count: 900), in: target) }
            }
        }
        #expect(Self.isMisuse(inside) && calls == 3, "\(String(describing: inside))")
        // An offset outside the key.
        let outside = #expect(throws: StrataError.self) {
            _ = try tx.referencedKeys(in: try tx.tree("index"), from: nil, to: nil, reverse: false, limit: .max) { $0.count + 1 }
        }
        #expect(Self.isMisuse(outside), "\(String(describing: outside))")
        tx.abort()
        // Keys of an ended read, and keys of another transaction.
        let reader = try db.beginRead()
        let stale = try reader.referencedKeys(in: try reader.tree("index"), from: nil, to: nil, reverse: true, limit: 10,
                                              referenceStart: Self.referenceStart)
        #expect(stale.count == 10)
        let other = try db.beginRead()
        let foreign = #expect(throws: StrataError.self) { try other.forEachValue(of: stale, in: try other.tree("target")) { _, _, _ in } }
        #expect(Self.isMisuse(foreign), "\(String(describing: foreign))")
        other.end()
        let readerTarget = try reader.tree("target")
        reader.end()
        let ended = #expect(throws: StrataError.self) { try reader.forEachValue(of: stale, in: readerTarget) { _, _, _ in } }
        #expect(Self.isMisuse(ended), "\(String(describing: ended))")
        // A callback's error stops the lookups.
        try db.read { tx throws in
            let keys = try tx.referencedKeys(in: try tx.tree("index"), from: nil, to: nil, reverse: false, limit: .max,
                                             referenceStart: Self.referenceStart)
            var seen = 0
            #expect(throws: Stop.self) {
                try tx.forEachValue(of: keys, in: try tx.tree("target")) { _, _, _ in
                    seen += 1
                    if seen == 40 { throw Stop() }
                }
            }
            #expect(seen == 40)
        }
    }

    /// A limit of 0 or less collects no key, but an ended transaction is still `closed` and a
    /// tree handle of another transaction still `misuse`, as with any limit.
    @Test func noLimitStillChecksTheTransactionAndTheTree() throws {
        let (dir, db) = try Self.store(entries: 100)
        defer { withExtendedLifetime(dir) {} }
        let reader = try db.beginRead()
        let index = try reader.tree("index")
        for limit in [0, -1] {
            #expect(try reader.referencedKeys(in: index, from: nil, to: nil, reverse: false, limit: limit,
                                              referenceStart: Self.referenceStart).count == 0)
        }
        let other = try db.beginRead()
        reader.end()
        for limit in [0, -1, 10] {
            let foreign = #expect(throws: StrataError.self) {
                _ = try other.referencedKeys(in: index, from: nil, to: nil, reverse: false, limit: limit, referenceStart: Self.referenceStart)
            }
            #expect(Self.isMisuse(foreign), "limit \(limit): \(String(describing: foreign))")
            let ended = #expect(throws: StrataError.self) {
                _ = try reader.referencedKeys(in: index, from: nil, to: nil, reverse: false, limit: limit, referenceStart: Self.referenceStart)
            }
            guard case .closed? = ended else {
                Issue.record("limit \(limit): \(String(describing: ended)) instead of closed")
                continue
            }
        }
        other.end()
    }
}
