import Foundation
import StrataTestFixtures
import Testing
@testable import StrataCore

/// A leaf hint remembers where the last key looked up in its leaf was (`LeafHint.lastIndex`), and
/// a put tries that position first. The guess is only a guess: a put of the key just looked up,
/// of a key just before or after it, of one far away in the same leaf, of the first or the
/// last key, each after a lookup elsewhere, must land where a binary search would put it.
@Suite struct LeafHintPositionTests {
    private static func key(_ n: Int) -> [UInt8] { Array(String(format: "k%05d", n).utf8) }

    @Test func putsAfterALookupLandInOrder() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.durability = .none
        let db = try Database(path: dir.path, options: options)
        var expected: [[UInt8]: [UInt8]] = [:]
        try db.write { tx in
            let tree = try tx.openOrCreateTree("t")
            for n in stride(from: 10, through: 200, by: 10) {
                try tx.put(Self.key(n), [UInt8(n % 256)], in: tree)
                expected[Self.key(n)] = [UInt8(n % 256)]
            }
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
                let replaced = try tx.put(Self.key(step.put), value, in: tree)
                #expect(replaced == (expected[Self.key(step.put)] != nil), "step \(number)")
                expected[Self.key(step.put)] = value
                // A prefix lookup (a unique index's check) moves the guess too.
                _ = try Array(Self.key(step.lookup).prefix(4)).withUnsafeBytes { prefix in
                    try tx.withFirstKey(startingWith: prefix, in: tree) { $0 != nil }
                }
            }
        }
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
}
