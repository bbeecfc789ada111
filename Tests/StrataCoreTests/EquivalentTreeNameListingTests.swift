import Foundation
import Glibc
import Testing
import StrataTestFixtures
@testable import StrataCore

/// Names of trees the catalog holds apart — "\u{212B}" (ANGSTROM SIGN) and "A\u{30A}" (A and a
/// combining ring), equal by Swift's `==` — stay apart wherever the engine lists, filters or
/// collects tree names: a transaction's list of names, a change stream's per-tree stamps, a
/// dump and its load (`TreeNameBytesTests` covers finding and opening them).
@Suite struct EquivalentTreeNameListingTests {
    static let sign = "\u{212B}", composed = "A\u{30A}"

    private static func bytes(_ names: [String]) -> [[UInt8]] { names.map { Array($0.utf8) } }

    @Test func aWriteTransactionListsATreeItCreatedBesideAnEquivalentOne() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        defer { db.close() }
        try db.write { tx in try tx.put("k", "v", in: try tx.createTree(Self.composed)) }
        try db.write { tx in
            _ = try tx.createTree(Self.sign)
            #expect(Self.bytes(try tx.treeNames()) == Self.bytes([Self.composed, Self.sign]))
            try tx.dropTree(try tx.tree(Self.composed))
            #expect(Self.bytes(try tx.treeNames()) == Self.bytes([Self.sign]), "dropping one lists the other still")
        }
        #expect(Self.bytes(try db.read { try $0.treeNames() }) == Self.bytes([Self.sign]))
    }

    /// The stream observes the byte-first of the two names ("A\u{30A}" starts 0x41, the sign 0xE2)
    /// and a third tree: the commit that touches only its tree must be its first event.
    @Test func aFilteredStreamHearsItsTreeBesideAnEquivalentOne() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        defer { db.close() }
        try db.write { tx in
            for name in [Self.composed, Self.sign, "z"] { try tx.put("k", "0", in: try tx.createTree(name)) }
        }
        let stream = try db.changes(trees: [Self.composed, "z"])
        defer { stream.cancel() }
        var events = stream.makeAsyncIterator()
        try db.write { tx in try tx.put("k", "1", in: try tx.tree(Self.composed)) }
        let touched = db.generation
        try db.write { tx in try tx.put("k", "1", in: try tx.tree("z")) }
        let first = await events.next()
        #expect(first?.generation ?? 0 >= touched)
        #expect(first?.changedTrees.contains { Array($0.utf8) == Array(Self.composed.utf8) } == true,
                "the commit to \(Self.bytes([Self.composed])) went unreported: \(String(describing: first))")
    }

    @Test func aDumpOfBothTreesLoadsBoth() throws {
        let dir = TemporaryDirectory()
        let source = try Database(path: dir.parent + "/source.strata")
        defer { source.close() }
        try source.write { tx in
            try tx.put("k", "sign", in: try tx.createTree(Self.sign))
            try tx.put("k", "composed", in: try tx.createTree(Self.composed))
        }
        var text: [UInt8] = []
        let summary = try source.dump { text.append(contentsOf: $0) }
        #expect(summary.trees == 2)
        let path = dir.parent + "/dump.jsonl"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text)))
        let target = try Database(path: dir.path)
        defer { target.close() }
        let descriptor = open(path, O_RDONLY)
        defer { Glibc.close(descriptor) }
        let loaded = try target.load(try DumpReader(fileDescriptor: descriptor, name: path))
        #expect(loaded.trees == 2 && loaded.entries == 2)
        try target.read { tx throws in
            #expect(try tx.string("k", in: tx.tree(Self.sign)) == "sign")
            #expect(try tx.string("k", in: tx.tree(Self.composed)) == "composed")
        }
    }

    @Test func aDumpOfATreeTheStoreLacksNamesItEvenBesideAnEquivalentOne() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        defer { db.close() }
        try db.write { tx in try tx.put("k", "sign", in: try tx.createTree(Self.sign)) }
        do {
            try db.dump(trees: [Self.composed]) { _ in }
            Issue.record("dumped a tree the store lacks")
        } catch DumpError.noSuchTree(_, let name, _) {
            #expect(Array(name.utf8) == Array(Self.composed.utf8))
        }
    }
}
