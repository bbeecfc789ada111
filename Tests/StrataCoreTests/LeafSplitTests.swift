import Foundation
import StrataTestFixtures
import Testing
@testable import StrataCore

/// A leaf split (`splitLeaf`) fills its two halves with runs of verbatim node copies around the
/// new node (`PageBuffer.appendLeafNodes`). A new node at every position of a full leaf, inline
/// or in an overflow run, must leave every entry in order with its value, exact tree records and
/// a clean check.
@Suite struct LeafSplitTests {
    private static func key(_ n: Int) -> [UInt8] { Array(String(format: "k%05d", n).utf8) }
    private static func value(_ n: Int, length: Int) -> [UInt8] { (0..<length).map { UInt8(truncatingIfNeeded: n &* 7 &+ $0) } }

    @Test func splitAtEveryPositionKeepsEveryEntryInOrder() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.durability = .none
        let db = try Database(path: dir.path, options: options)
        let valueLength = 100
        // How many entries of this size one leaf holds: keys 2, 4, 6, … until the first split.
        let capacity = try db.write { tx -> Int in
            let probe = try tx.openOrCreateTree("probe")
            var count = 0
            while try tx.record(of: probe).leafPages == 1 || count == 0 {
                count += 1
                try tx.put(Self.key(2 * count), Self.value(count, length: valueLength), in: probe)
            }
            return count - 1
        }
        #expect(capacity > 10)

        // For each position p, a full leaf of keys 2, 4, …, 2 * capacity gets key 2p + 1 (between
        // keys 2p and 2p + 2), with a value that splits it inline or one in an overflow run.
        for isOverflow in [false, true] {
            for position in 0...capacity {
                let name = "split-\(isOverflow ? "overflow" : "inline")-\(position)"
                var expected: [[UInt8]: [UInt8]] = [:]
                try db.write { tx in
                    let tree = try tx.openOrCreateTree(name)
                    // Out of order, so the fill itself does not take the appending path.
                    for n in (1...capacity).reversed() {
                        let value = Self.value(n, length: valueLength)
                        try tx.put(Self.key(2 * n), value, in: tree)
                        expected[Self.key(2 * n)] = value
                    }
                    #expect(try tx.record(of: tree).leafPages == 1)
                }
                try db.write { tx in
                    let tree = try tx.tree(name)
                    let value = Self.value(position, length: isOverflow ? 6000 : valueLength + 40)
                    try tx.put(Self.key(2 * position + 1), value, in: tree)
                    expected[Self.key(2 * position + 1)] = value
                    if !isOverflow { #expect(try tx.record(of: tree).leafPages == 2) }
                }
                try db.read { tx in
                    let tree = try tx.tree(name)
                    #expect(try tx.count(tree) == expected.count)
                    var scanned: [[UInt8]] = []
                    try tx.scan(tree) { key, value in
                        scanned.append(key.bytes)
                        #expect(value.bytes == expected[key.bytes], "\(name): value of \(String(decoding: key.bytes, as: UTF8.self))")
                        return true
                    }
                    #expect(scanned == expected.keys.sorted { $0.lexicographicallyPrecedes($1) }, "\(name): keys out of order")
                }
            }
        }
        let report = try db.check()
        #expect(report.isClean, "\(report.problems)")
    }
}
