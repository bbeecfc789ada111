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
}
