import Foundation
import StrataTestFixtures
import Testing
@testable import StrataCore

/// A leaf split (`splitLeaf`) fills its two halves with runs of verbatim node copies around the
/// new node (`PageBuffer.appendLeafNodes`). A new node at every position of a full leaf — inline,
/// in an overflow run, or replacing a key's value with a larger one — must split the leaf and
/// leave every entry in order with its value, exact tree records and a clean check; so must
/// splits of leaves under a branch (a tree of more than one level). 4 KiB pages, so that the
/// leaf is full with the same entries on every system.
@Suite struct LeafSplitTests {
    private static func key(_ n: Int) -> [UInt8] { Array(String(format: "k%05d", n).utf8) }
    private static func value(_ n: Int, length: Int) -> [UInt8] { (0..<length).map { UInt8(truncatingIfNeeded: n &* 7 &+ $0) } }
    private static let valueLength = 100

    private enum Change: CaseIterable { case inline, overflow, replace }

    private static func database(_ dir: TemporaryDirectory) throws -> Database {
        var options = DatabaseOptions()
        options.durability = .none
        options.pageSize = 4096
        return try Database(path: dir.path, options: options)
    }

    /// Every entry of `name` in key order with its expected value.
    private static func expectContents(of name: String, in db: Database, _ expected: [[UInt8]: [UInt8]]) throws {
        try db.read { tx in
            let tree = try tx.tree(name)
            #expect(try tx.count(tree) == expected.count, "\(name)")
            var scanned: [[UInt8]] = []
            try tx.scan(tree) { key, value in
                scanned.append(key.bytes)
                #expect(value.bytes == expected[key.bytes], "\(name): value of \(String(decoding: key.bytes, as: UTF8.self))")
                return true
            }
            #expect(scanned == expected.keys.sorted { $0.lexicographicallyPrecedes($1) }, "\(name): keys out of order")
        }
    }

    @Test func splitAtEveryPositionKeepsEveryEntryInOrder() throws {
        let dir = TemporaryDirectory()
        let db = try Self.database(dir)
        // How many entries of this size one leaf holds: keys 2, 4, 6, … until the first split.
        let capacity = try db.write { tx -> Int in
            let probe = try tx.openOrCreateTree("probe")
            var count = 0
            while try tx.record(of: probe).leafPages == 1 || count == 0 {
                count += 1
                try tx.put(Self.key(2 * count), Self.value(count, length: Self.valueLength), in: probe)
            }
            return count - 1
        }
        #expect(capacity > 10)

        // For each position p, a full leaf of keys 2, 4, …, 2 * capacity gets key 2p + 1 (between
        // keys 2p and 2p + 2) with a value that does not fit inline, or one in an overflow run
        // (under a key longer than the room a full leaf has left), or key 2p (p ≥ 1) gets a
        // value larger by more than that room.
        for change in Change.allCases {
            for position in (change == .replace ? 1 : 0)...capacity {
                let name = "split-\(change)-\(position)"
                var expected: [[UInt8]: [UInt8]] = [:]
                try db.write { tx in
                    let tree = try tx.openOrCreateTree(name)
                    // Out of order, so the fill itself does not take the appending path.
                    for n in (1...capacity).reversed() {
                        let value = Self.value(n, length: Self.valueLength)
                        try tx.put(Self.key(2 * n), value, in: tree)
                        expected[Self.key(2 * n)] = value
                    }
                    #expect(try tx.record(of: tree).leafPages == 1)
                }
                try db.write { tx in
                    let tree = try tx.tree(name)
                    let key: [UInt8], value: [UInt8]
                    switch change {
                    case .inline: (key, value) = (Self.key(2 * position + 1), Self.value(position, length: Self.valueLength + 40))
                    case .overflow:
                        (key, value) = (Self.key(2 * position + 1) + [UInt8](repeating: 0x78, count: 150), Self.value(position, length: 6000))
                    case .replace: (key, value) = (Self.key(2 * position), Self.value(position + 1, length: Self.valueLength + 300))
                    }
                    let replaced = try tx.put(key, value, in: tree)
                    #expect(replaced == (change == .replace), "\(name)")
                    expected[key] = value
                    #expect(try tx.record(of: tree).leafPages == 2, "\(name)")
                    #expect(try tx.record(of: tree).depth == 2, "\(name)")
                }
                try Self.expectContents(of: name, in: db, expected)
            }
        }
        let report = try db.check()
        #expect(report.isClean, "\(report.problems)")
    }

    /// Splits of leaves below a branch: a tree of many leaves gets larger entries in its middle,
    /// replaced values growing and new keys between the old ones, each commit checked.
    @Test func splitsInATreeOfMoreThanOneLevelKeepEveryEntryInOrder() throws {
        let dir = TemporaryDirectory()
        let db = try Self.database(dir)
        var expected: [[UInt8]: [UInt8]] = [:]
        let count = 4_000
        try db.write { tx in
            let tree = try tx.openOrCreateTree("deep")
            for n in (1...count).reversed() {
                let value = Self.value(n, length: Self.valueLength)
                try tx.put(Self.key(2 * n), value, in: tree)
                expected[Self.key(2 * n)] = value
            }
        }
        let before = try db.read { tx in try tx.record(of: try tx.tree("deep")) }
        #expect(before.depth >= 2 && before.leafPages > 10, "depth \(before.depth), \(before.leafPages) leaves")
        for round in 0..<3 {
            try db.write { tx in
                let tree = try tx.tree("deep")
                for n in stride(from: count / 3 + round, to: 2 * count / 3, by: 7) {
                    let grown = Self.value(n + round, length: Self.valueLength + 150)
                    try tx.put(Self.key(2 * n), grown, in: tree)
                    expected[Self.key(2 * n)] = grown
                    let added = Self.value(n, length: Self.valueLength + 40 * round)
                    try tx.put(Self.key(2 * n + 1), added, in: tree)
                    expected[Self.key(2 * n + 1)] = added
                }
            }
            try Self.expectContents(of: "deep", in: db, expected)
        }
        let after = try db.read { tx in try tx.record(of: try tx.tree("deep")) }
        #expect(after.leafPages > before.leafPages && after.depth >= before.depth)
        let report = try db.check()
        #expect(report.isClean, "\(report.problems)")
    }
}
