import Foundation
import Testing
@testable import StrataCore

/// `Database.withSnapshot` and the per-generation `SnapshotCache` it shares with read transactions.
@Suite struct ReadSnapshotTests {
    @Test func getsAndScansTheNewestGeneration() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            let t = try tx.createTree("t")
            for i in 0..<500 { try tx.put(String(format: "k%04d", i), "v\(i)", in: t) }
        }
        try db.withSnapshot { snapshot throws in
            #expect(snapshot.generation == db.generation)
            #expect(try snapshot.get("k0042", inTree: "t").map { String(decoding: $0, as: UTF8.self) } == "v42")
            #expect(try snapshot.get("nope", inTree: "t") == nil)
            #expect(try snapshot.get("k0042", inTree: "missing") == nil)
            var keys: [String] = []
            try snapshot.scan(inTree: "t", from: Array("k0100".utf8), to: Array("k0105".utf8)) { key, _ throws in
                keys.append(String(decoding: key, as: UTF8.self))
                return true
            }
            #expect(keys == ["k0100", "k0101", "k0102", "k0103", "k0104"])
            var last: String?
            try snapshot.scan(inTree: "t", reverse: true) { key, _ throws in
                last = String(decoding: key, as: UTF8.self)
                return false
            }
            #expect(last == "k0499")
        }
        // A new generation replaces the cached meta and catalog entries: new and dropped trees show.
        try db.write { tx throws in
            try tx.put("k0042", "changed", in: try tx.tree("t"))
            try tx.put("x", "y", in: try tx.createTree("u"))
        }
        try db.withSnapshot { snapshot throws in
            #expect(try snapshot.get("k0042", inTree: "t").map { String(decoding: $0, as: UTF8.self) } == "changed")
            #expect(try snapshot.get("x", inTree: "u") != nil)
        }
        try db.read { tx throws in #expect(try tx.string("k0042", in: tx.tree("t")) == "changed") }
        try db.write { tx throws in try tx.dropTree(try tx.tree("u")) }
        try db.withSnapshot { snapshot throws in #expect(try snapshot.get("x", inTree: "u") == nil) }
        try db.read { tx throws in #expect(try tx.treeIfPresent("u") == nil) }
    }

    @Test func aSnapshotUsedAfterItsCallThrows() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try tx.put("a", "b", in: try tx.createTree("t")) }
        let escaped = try db.withSnapshot { $0 }
        #expect(throws: StrataError.self) { _ = try escaped.get("a", inTree: "t") }
    }

    @Test func aReaderHandleFollowsTheWriter() throws {
        let dir = TemporaryDirectory()
        let writer = try Database(path: dir.path)
        try writer.write { tx throws in try tx.put("a", "1", in: try tx.createTree("t")) }
        let reader = try Database(path: dir.path, mode: .readOnly)
        for round in 2...5 {
            try writer.write { tx throws in try tx.put("a", "\(round)", in: try tx.tree("t")) }
            try reader.withSnapshot { snapshot throws in
                #expect(try snapshot.get("a", inTree: "t").map { String(decoding: $0, as: UTF8.self) } == "\(round)")
            }
            try reader.read { tx throws in #expect(try tx.string("a", in: tx.tree("t")) == "\(round)") }
        }
    }

    /// The pooled reader behind `withSnapshot` keeps its generation's page count, generation and
    /// commit time as plain copies (read without retaining the generation's state): after every
    /// commit they must be the new generation's. A stale page count would refuse the pages the
    /// commit appended (they lie past the old end); a stale generation or commit time would show.
    @Test func aPooledReaderTakesEachNewGenerationsPageCountAndTimes() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try tx.put("k000000", "v0", in: try tx.createTree("t")) }
        var lastPageCount: UInt64 = 0
        for round in 1...6 {
            // Each round appends pages (values of 1 KiB, new keys): the file grows every commit.
            try db.write { tx throws in
                let t = try tx.tree("t")
                for i in 0..<64 { try tx.put(String(format: "k%06d", round * 1_000 + i), [UInt8](repeating: UInt8(round), count: 1_024), in: t) }
            }
            let (pageCount, commitTime) = try db.read { tx throws in (tx.pageCount, tx.commitTime) }
            #expect(pageCount > lastPageCount)
            lastPageCount = pageCount
            for _ in 0..<2 { // the second call takes the fast path on the same generation
                try db.withSnapshot { snapshot throws in
                    #expect(snapshot.generation == db.generation)
                    #expect(snapshot.commitTime == commitTime)
                    for i in [0, 31, 63] {
                        #expect(try snapshot.get(String(format: "k%06d", round * 1_000 + i), inTree: "t")?.bytes
                                == [UInt8](repeating: UInt8(round), count: 1_024), "round \(round) key \(i)")
                    }
                }
            }
        }
    }

    /// `firstEntry(atOrAfter:)` on a snapshot and in a transaction answers what a forward scan from
    /// the key would give first: an exact key, a key between two stored ones, every leaf's
    /// boundary (where the answer starts the next leaf), an overflow value, past the end, and a
    /// missing tree.
    @Test func firstEntryIsWhatAScanFromTheKeyGivesFirst() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let big = [UInt8](repeating: 7, count: 20_000)
        try db.write { tx throws in
            let t = try tx.createTree("t")
            for i in stride(from: 0, to: 2_000, by: 2) { try tx.put(String(format: "k%05d", i), "v\(i)", in: t) }
            try tx.put("k00501", big, in: t)
        }
        func text(_ view: ByteView?) -> String? { view.map { String(decoding: $0, as: UTF8.self) } }
        let probes = (0..<2_010).map { String(format: "k%05d", $0) } + ["", "a", "k", "k00501", "z"]
        try db.withSnapshot { snapshot throws in
            for probe in probes {
                var expected: (String, [UInt8])?
                try snapshot.scan(inTree: "t", from: Array(probe.utf8)) { key, value throws in
                    expected = (String(decoding: key, as: UTF8.self), value.bytes)
                    return false
                }
                let found = try snapshot.firstEntry(atOrAfter: probe, inTree: "t")
                #expect(text(found?.key) == expected?.0, "probe \(probe)")
                #expect(found?.value.bytes == expected?.1, "probe \(probe)")
            }
            #expect(try snapshot.firstEntry(atOrAfter: "k", inTree: "missing") == nil)
        }
        try db.read { tx throws in
            let t = try tx.tree("t")
            #expect(text(try tx.firstEntry(atOrAfter: "k00003", in: t)?.key) == "k00004")
            #expect(try tx.firstEntry(atOrAfter: "k00501", in: t)?.value.bytes == big)
            #expect(try tx.firstEntry(atOrAfter: "k01999", in: t) == nil)
        }
    }
}
