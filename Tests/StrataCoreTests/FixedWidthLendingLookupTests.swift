import Foundation
import StrataTestFixtures
import Testing
@testable import StrataCore

/// `Transaction.withEachValue(ofKeysIn:width:in:_:)` (values lent in place) answers exactly like
/// the view form `forEachValue(ofKeysIn:width:in:_:)` and like one `get` per key: same positions
/// in the same order, same bytes, across group boundaries, for keys present and absent, inline
/// and overflow values, in a deep tree, inside a write transaction (dirty pages); a bad width is
/// misuse, changing the transaction inside the body stops it, and an ended transaction is
/// `closed`.
@Suite struct FixedWidthLendingLookupTests {
    /// Keys of `width` bytes: a random 16-byte prefix from a small pool (so keys share leaves and
    /// words) and a 2-byte suffix, like entity header keys.
    private static let width = 18

    private static func key(_ n: UInt64) -> [UInt8] {
        var bytes = withUnsafeBytes(of: (n &* 0x9E37_79B9_7F4A_7C15).bigEndian) { Array($0) }
        bytes += withUnsafeBytes(of: (n >> 3).bigEndian) { Array($0) }
        bytes += [UInt8(truncatingIfNeeded: n), 0]
        return bytes
    }

    /// Both forms over `probes` in `tree`: equal answers, in order, matching `get`.
    private func compare(_ tx: Transaction, probes: [UInt64], tree: Tree) throws -> Int {
        let buffer = probes.flatMap(Self.key)
        var lent: [(Int, [UInt8]?)] = []
        var viewed: [(Int, [UInt8]?)] = []
        try buffer.withUnsafeBytes { keys in
            try tx.withEachValue(ofKeysIn: keys, width: Self.width, in: tree) { position, value in lent.append((position, value.map { Array($0) })) }
            try tx.forEachValue(ofKeysIn: keys, width: Self.width, in: tree) { position, value in viewed.append((position, value?.bytes)) }
        }
        #expect(lent.map(\.0) == Array(probes.indices))
        #expect(viewed.map(\.0) == Array(probes.indices))
        var present = 0
        for (position, value) in lent {
            #expect(value == viewed[position].1, "probe \(probes[position])")
            #expect(value == (try tx.get(Self.key(probes[position]), in: tree))?.bytes, "probe \(probes[position])")
            if value != nil { present += 1 }
        }
        return present
    }

    @Test func randomizedProbesAnswerLikeTheViewFormAndGet() throws {
        var random = SeededGenerator(seed: testSeed("FixedWidthLendingLookupTests.randomized"))
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let stored = (0..<6_000).map { _ in UInt64.random(in: 0..<12_000, using: &random) }
        try db.write { tx throws in
            let tree = try tx.createTree("t")
            for n in stored {
                // Some values large enough for an overflow run.
                let length = n % 97 == 0 ? 5_000 : Int(n % 200)
                try tx.put(Self.key(n), [UInt8](repeating: UInt8(truncatingIfNeeded: n), count: length), in: tree)
            }
        }
        try db.read { tx throws in
            let tree = try tx.tree("t")
            for count in [0, 1, 31, 32, 33, 500] {
                let probes = (0..<count).map { _ in
                    Bool.random(using: &random) ? stored[Int.random(in: 0..<stored.count, using: &random)] : UInt64.random(in: 0..<12_000, using: &random)
                }
                let present = try compare(tx, probes: probes, tree: tree)
                if count == 500 { #expect(present > 250) }
            }
        }
        // Inside a write transaction, with some leaves dirty.
        try db.write { tx throws in
            let tree = try tx.tree("t")
            for _ in 0..<200 { try tx.put(Self.key(UInt64.random(in: 0..<12_000, using: &random)), [1, 2, 3], in: tree) }
            let probes = (0..<300).map { _ in UInt64.random(in: 0..<12_000, using: &random) }
            _ = try compare(tx, probes: probes, tree: tree)
        }
    }

    @Test func badWidthsAndChangesInsideTheBodyAreMisuse() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            let tree = try tx.createTree("t")
            for n in 0..<100 as Range<UInt64> { try tx.put(Self.key(n), [UInt8(n)], in: tree) }
            let buffer = (0..<10 as Range<UInt64>).flatMap(Self.key)
            buffer.withUnsafeBytes { keys in
                #expect(throws: StrataError.self) { try tx.withEachValue(ofKeysIn: keys, width: 7, in: tree) { _, _ in } }
                #expect(throws: StrataError.self) { try tx.withEachValue(ofKeysIn: keys, width: 0, in: tree) { _, _ in } }
                var calls = 0
                #expect(throws: StrataError.self) {
                    try tx.withEachValue(ofKeysIn: keys, width: Self.width, in: tree) { _, _ in
                        calls += 1
                        try tx.put([9, 9], [9], in: tree)
                    }
                }
                #expect(calls == 1)
            }
        }
        // A transaction kept past its end: `closed`, and the body never runs.
        var kept: Transaction?
        let tree = try db.read { tx in kept = tx; return try tx.tree("t") }
        let ended = try #require(kept)
        let buffer = (0..<10 as Range<UInt64>).flatMap(Self.key)
        var calls = 0
        _ = buffer.withUnsafeBytes { keys in
            #expect(throws: StrataError.closed(what: "transaction")) {
                try ended.withEachValue(ofKeysIn: keys, width: Self.width, in: tree) { _, _ in calls += 1 }
            }
        }
        #expect(calls == 0)
    }
}
