import Foundation
import StrataTestFixtures
import Testing
@testable import StrataCore

/// A leaf hint remembers where the last key looked up in its leaf was (`LeafHint.lastIndex`), and
/// a put tries that position first. The guess is only a guess: a put of the key just looked up,
/// of a key just before or after it, of one far away in the same leaf, of the first or the
/// last key, each after a lookup elsewhere, must land where a binary search would put it; in a
/// tree of many leaves a put of a key beyond the hinted leaf's separators must not go there.
/// `leafHintInserts` counts the puts that went through the hint.
@Suite struct LeafHintPositionTests {
    private static func key(_ n: Int) -> [UInt8] { Array(String(format: "k%05d", n).utf8) }

    private static func database(_ dir: TemporaryDirectory) throws -> Database {
        var options = DatabaseOptions()
        options.durability = .none
        options.pageSize = 4096
        return try Database(path: dir.path, options: options)
    }

    private static func expectContents(of db: Database, _ expected: [[UInt8]: [UInt8]]) throws {
        try db.read { tx in
            let tree = try tx.tree("t")
            var scanned: [[UInt8]] = []
            try tx.scan(tree) { key, value in
                scanned.append(key.bytes)
                #expect(value.bytes == expected[key.bytes])
                return true
            }
            #expect(scanned == expected.keys.sorted { $0.lexicographicallyPrecedes($1) })
        }
        let report = try db.check()
        #expect(report.isClean, "\(report.problems)")
    }

    /// Calls `withFirstKey(startingWith:)` with `prefix` and returns the key it found.
    private static func firstKey(startingWith prefix: [UInt8], in tree: Tree, _ tx: WriteTransaction) throws -> [UInt8]? {
        try prefix.withUnsafeBytes { prefix in try tx.withFirstKey(startingWith: prefix, in: tree) { $0.map { Array($0) } } }
    }

    /// One leaf: every put goes through the hint, after a lookup (`valueForReplacing`) and right
    /// after a prefix lookup (`withFirstKey`, a unique index's check).
    @Test func putsAfterALookupLandInOrder() throws {
        let dir = TemporaryDirectory()
        let db = try Self.database(dir)
        var expected: [[UInt8]: [UInt8]] = [:]
        try db.write { tx in
            let tree = try tx.openOrCreateTree("t")
            for n in stride(from: 10, through: 200, by: 10) {
                try tx.put(Self.key(n), [UInt8(n % 256), 0], in: tree)
                expected[Self.key(n)] = [UInt8(n % 256), 0]
            }
            #expect(try tx.record(of: tree).leafPages == 1)
        }
        // (looked up, then put): the same key, neighbours on both sides, far keys, both ends,
        // keys before the first and after the last.
        let steps: [(lookup: Int, put: Int)] = [(100, 100), (100, 99), (100, 101), (100, 91), (100, 109),
                                                 (100, 15), (100, 195), (50, 10), (50, 200), (50, 5), (50, 205),
                                                 (150, 149), (149, 150), (10, 11), (200, 199), (120, 120)]
        try db.write { tx in
            let tree = try tx.tree("t")
            for (number, step) in steps.enumerated() {
                let found = try tx.valueForReplacing(Self.key(step.lookup), in: tree)
                #expect(found?.bytes == expected[Self.key(step.lookup)], "step \(number)")
                let value = [UInt8(number), 0xAB]
                var hinted = tx.leafHintInserts
                let replaced = try tx.put(Self.key(step.put), value, in: tree)
                #expect(replaced == (expected[Self.key(step.put)] != nil), "step \(number)")
                #expect(tx.leafHintInserts == hinted + 1, "step \(number): the put after a lookup did not use the hint")
                expected[Self.key(step.put)] = value
                // A prefix lookup (a unique index's check) moves the guess too; the put of the
                // key it found goes through the hint and replaces that key.
                let prefix = Array(Self.key(step.lookup).prefix(5))
                let first = try #require(try Self.firstKey(startingWith: prefix, in: tree, tx), "step \(number)")
                #expect(first == expected.keys.filter { $0.starts(with: prefix) }.min { $0.lexicographicallyPrecedes($1) })
                hinted = tx.leafHintInserts
                #expect(try tx.put(first, [UInt8(number), 0xCD], in: tree), "step \(number): the found key was not replaced")
                #expect(tx.leafHintInserts == hinted + 1, "step \(number): the put after a prefix lookup did not use the hint")
                expected[first] = [UInt8(number), 0xCD]
                #expect(try tx.get(first, in: tree)?.bytes == [UInt8(number), 0xCD])
            }
        }
        try Self.expectContents(of: db, expected)
    }

    /// Many leaves: a put of the key a lookup just found goes through the hint; a put of a key
    /// many leaves away does not (it descends); new keys next to every looked-up key, across
    /// the whole range, land in order (the hint's separator checks decide which leaf is right).
    @Test func putsInATreeOfManyLeavesUseTheHintOnlyInItsLeaf() throws {
        let dir = TemporaryDirectory()
        let db = try Self.database(dir)
        var expected: [[UInt8]: [UInt8]] = [:]
        let count = 3_000
        try db.write { tx in
            let tree = try tx.openOrCreateTree("t")
            for n in (0..<count).reversed() {
                try tx.put(Self.key(2 * n), [UInt8(n % 256), 0], in: tree)
                expected[Self.key(2 * n)] = [UInt8(n % 256), 0]
            }
            #expect(try tx.record(of: tree).leafPages > 10)
        }
        var hintedNeighbours = 0, neighbours = 0
        try db.write { tx in
            let tree = try tx.tree("t")
            for n in stride(from: 0, to: count, by: 37) {
                let looked = Self.key(2 * n)
                #expect(try tx.valueForReplacing(looked, in: tree)?.bytes == expected[looked])
                var hinted = tx.leafHintInserts
                #expect(try tx.put(looked, [1, 1], in: tree))
                #expect(tx.leafHintInserts == hinted + 1, "\(n): the put of the key just looked up descended")
                expected[looked] = [1, 1]
                // Over 1,000 entries away: another leaf (a 4 KiB leaf holds a few hundred).
                let far = Self.key(2 * ((n + count / 2) % count))
                hinted = tx.leafHintInserts
                #expect(try tx.put(far, [2, 2], in: tree))
                #expect(tx.leafHintInserts == hinted, "\(n): a key far away went into the hinted leaf")
                expected[far] = [2, 2]
                // Back to the first key's leaf (a lookup), a prefix lookup answered there, then
                // new keys on both sides of it (at a leaf's edge they belong to the neighbour:
                // the separators decide).
                #expect(try tx.valueForReplacing(looked, in: tree)?.bytes == [1, 1])
                let lookups = tx.leafHintLookups
                #expect(try Self.firstKey(startingWith: looked, in: tree, tx) == looked)
                #expect(tx.leafHintLookups == lookups + 1, "\(n): the prefix lookup descended")
                for new in [2 * n - 1, 2 * n + 1] where new >= 0 {
                    hinted = tx.leafHintInserts
                    #expect(try !tx.put(Self.key(new), [3, 3], in: tree))
                    neighbours += 1
                    hintedNeighbours += tx.leafHintInserts - hinted
                    expected[Self.key(new)] = [3, 3]
                }
            }
        }
        print("[putsInATreeOfManyLeavesUseTheHintOnlyInItsLeaf] \(hintedNeighbours) of \(neighbours) neighbours through the hint")
        #expect(hintedNeighbours > neighbours / 2)
        try Self.expectContents(of: db, expected)
    }
}
