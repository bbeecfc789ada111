import Foundation
import Testing
import StrataTestFixtures
@testable import StrataCore

/// `WriterCatalogMemory`: a write transaction opens the trees of the previous commit from the
/// writer session's memory, and the memory never answers for a catalog it was not made from —
/// trees dropped, renamed or created again by the previous commit, a tree a rolled-back nested
/// transaction created, an aborted transaction; trees the previous commit did not open keep the
/// entries remembered before it.
@Suite struct WriterCatalogMemoryTests {
    struct Tag: Error {}

    /// Every tree's record as a read transaction sees the committed catalog.
    static func committedRecords(_ db: Database) throws -> [String: TreeRecord] {
        try db.read { tx in
            Dictionary(uniqueKeysWithValues: try tx.treeNames().map { ($0, try tx.record(of: try tx.tree($0))) })
        }
    }

    /// Each named tree's record (nil if absent) as the next write transaction opens it.
    static func writerRecords(_ db: Database, _ names: [String]) throws -> (records: [String: TreeRecord?], hits: Int) {
        let tx = try db.beginWrite()
        defer { tx.abort() }
        let before = tx.session.catalogMemory.hits
        var records: [String: TreeRecord?] = [:]
        for name in names { records.updateValue(try tx.treeIfPresent(name).map { try tx.record(of: $0) }, forKey: name) }
        return (records, tx.session.catalogMemory.hits - before)
    }

    @Test func theNextTransactionOpensThePreviousCommitsTreesFromMemory() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            for name in ["a", "b"] {
                let tree = try tx.openOrCreateTree(name)
                for i in 0..<500 { try tx.put("\(name)\(i)", "v", in: tree) }
            }
        }
        try db.write { tx in try tx.put("a-more", "v", in: try tx.tree("a")) }
        let (records, hits) = try Self.writerRecords(db, ["a", "b"])
        #expect(hits == 2)
        let committed = try Self.committedRecords(db)
        #expect(records["a"] == .some(committed["a"]))
        #expect(records["b"] == .some(committed["b"]))
    }

    @Test func droppedRenamedAndRecreatedTreesAreSeenAsCommitted() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            for name in ["a", "b", "c", "d"] {
                let tree = try tx.openOrCreateTree(name)
                for i in 0..<300 { try tx.put("\(name)\(i)", "v", in: tree) }
            }
        }
        // Remembered: a, b, c, d (this commit opened them all).
        try db.write { tx in
            for name in ["a", "b", "c", "d"] { _ = try tx.tree(name) }
            try tx.put("d-more", "v", in: try tx.tree("d"))
        }
        try db.write { tx in
            try tx.dropTree(try tx.tree("a"))
            try tx.renameTree(try tx.tree("b"), to: "b2")
            try tx.dropTree(try tx.tree("c"))
            try tx.put("only", "v", in: try tx.createTree("c"))
        }
        let (records, hits) = try Self.writerRecords(db, ["a", "b", "b2", "c", "d"])
        #expect(hits == 5)
        let committed = try Self.committedRecords(db)
        #expect(records["a"] == .some(nil))
        #expect(records["b"] == .some(nil))
        #expect(records["b2"] == .some(committed["b2"]))
        #expect(committed["b2"]?.entries == 300)
        #expect(records["c"] == .some(committed["c"]))
        #expect(committed["c"]?.entries == 1)
        #expect(records["d"] == .some(committed["d"]))
    }

    @Test func aTreeOfARolledBackNestedTransactionIsNotRemembered() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "v", in: try tx.createTree("a")) }
        try db.write { tx in
            try tx.put("k2", "v", in: try tx.tree("a"))
            #expect(throws: Tag.self) {
                try tx.nested { inner in
                    try inner.put("k", "v", in: try inner.createTree("x"))
                    throw Tag()
                }
            }
        }
        let (records, _) = try Self.writerRecords(db, ["x", "a"])
        #expect(records["x"] == .some(nil))
        #expect(records["a"] == .some(try Self.committedRecords(db)["a"]))
    }

    @Test func anAbortedTransactionLeavesTheCommittedEntries() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "v", in: try tx.createTree("a")) }
        let aborted = try db.beginWrite()
        try aborted.dropTree(try aborted.tree("a"))
        try aborted.put("k", "v", in: try aborted.createTree("z"))
        aborted.abort()
        let (records, hits) = try Self.writerRecords(db, ["a", "z"])
        #expect(hits >= 1)
        #expect(records["a"] == .some(try Self.committedRecords(db)["a"]))
        #expect(records["z"] == .some(nil))
    }

    /// A commit that fails at its flush (ENOSPC) adopts nothing: the next transaction still sees
    /// the base's trees, and not the tree the failed commit created or the one it dropped.
    @Test func aFailedCommitLeavesTheBasesEntries() throws {
        let dir = TemporaryDirectory()
        let box = IOBox<FaultyIO>()
        var options = DatabaseOptions()
        box.install(in: &options) { FaultyIO(inner: $0) }
        let db = try Database(path: dir.path, options: options)
        try db.write { tx in
            try tx.put("k", "v", in: try tx.createTree("a"))
            try tx.put("k", "v", in: try tx.createTree("b"))
        }
        _ = try Self.writerRecords(db, ["a", "b", "z"]) // remembered for the base
        box.io!.armed = (.metaSync, .enospc, 1)
        #expect(throws: StrataError.self) {
            try db.write { tx in
                try tx.dropTree(try tx.tree("b"))
                try tx.put("k", "v2", in: try tx.tree("a"))
                try tx.put("k", "v", in: try tx.createTree("z"))
            }
        }
        let (records, hits) = try Self.writerRecords(db, ["a", "b", "z"])
        #expect(hits >= 1)
        let committed = try Self.committedRecords(db)
        #expect(records["a"] == .some(committed["a"]))
        #expect(records["b"] == .some(committed["b"]))
        #expect(records["z"] == .some(nil))
        #expect(committed["b"] != nil && committed["z"] == nil)
    }

    /// A group commit whose requests create, drop and rename trees, some of them failing: the
    /// failed requests' nested levels roll back their catalog changes, and the memory the group's
    /// commit leaves agrees with the committed catalog for every name any request touched.
    @Test func aGroupWithFailingRequestsRemembersOnlyWhatCommitted() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.durability = .none
        let db = try Database(path: dir.path, options: options)
        try db.write { tx in
            for name in ["kept", "dropped", "renamed", "dropped-then-failed", "renamed-then-failed"] {
                try tx.put("k", "v", in: try tx.createTree(name))
            }
        }
        _ = try Self.writerRecords(db, ["kept"]) // remembered for the base
        let holder = try db.beginWrite() // the writer lock: requests queue behind it
        let group = DispatchGroup()
        let requests: [@Sendable (WriteTransaction) throws -> Void] = [
            { tx in try tx.put("k", "v", in: try tx.createTree("new-ok")) },
            { tx in try tx.put("k", "v", in: try tx.createTree("new-failed")); throw Tag() },
            { tx in try tx.dropTree(try tx.tree("dropped")) },
            { tx in try tx.dropTree(try tx.tree("dropped-then-failed")); throw Tag() },
            { tx in try tx.renameTree(try tx.tree("renamed"), to: "renamed-ok") },
            { tx in try tx.renameTree(try tx.tree("renamed-then-failed"), to: "renamed-failed"); throw Tag() },
            { tx in try tx.put("k2", "v", in: try tx.tree("kept")) },
            { tx in try tx.put("k3", "v", in: try tx.tree("kept")); throw Tag() },
        ]
        for request in requests {
            group.enter()
            Thread {
                _ = try? db.write { tx in try request(tx) }
                group.leave()
            }.start()
        }
        usleep(300_000) // let every request queue (one leads and waits for the lock)
        holder.abort()
        group.wait()
        #expect(db.groupCommitStatistics.commits >= 1)
        let names = ["kept", "dropped", "renamed", "dropped-then-failed", "renamed-then-failed",
                     "new-ok", "new-failed", "renamed-ok", "renamed-failed"]
        let (records, _) = try Self.writerRecords(db, names)
        let committed = try Self.committedRecords(db)
        for name in names {
            #expect(records[name] == .some(committed[name]), "\(name)")
        }
        #expect(Set(committed.keys) == ["kept", "dropped-then-failed", "renamed-then-failed", "new-ok", "renamed-ok"])
        #expect(committed["kept"]?.entries == 2)
    }
}
