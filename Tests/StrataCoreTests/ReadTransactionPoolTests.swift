import Foundation
import Testing
@testable import StrataCore

/// Read transactions reused by `Database.read` and `withSnapshot` (see `IdlePool`):
/// reuse must never be observable, except as speed.
@Suite struct ReadTransactionPoolTests {
    func store() throws -> (TemporaryDirectory, Database) {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "one", in: try tx.createTree("t")) }
        return (dir, db)
    }

    func value(_ db: Database) throws -> String? {
        try db.read { tx in try tx.get("k", in: try tx.tree("t")).map { String(decoding: $0, as: UTF8.self) } }
    }

    @Test func aRenewedTransactionReadsTheNewGeneration() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        #expect(try value(db) == "one")
        for round in 0..<20 {
            try db.write { tx in try tx.put("k", "v\(round)", in: try tx.tree("t")) }
            #expect(try value(db) == "v\(round)")
            #expect(try db.read { $0.generation } == db.generation)
        }
        // A tree created after the pooled transaction last looked it up (as missing) is found.
        #expect(try db.read { try $0.treeIfPresent("late") } == nil)
        try db.write { tx in _ = try tx.createTree("late") }
        #expect(try db.read { try $0.treeIfPresent("late") } != nil)
    }

    @Test func aTransactionKeptAfterItsCallIsNotReused() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        var kept: ReadTransaction?
        try db.read { kept = $0 }
        try db.read { tx throws in #expect(tx !== kept) }
        #expect(throws: StrataError.closed(what: "transaction")) { try kept?.tree("t") }
    }

    @Test func treeHandlesOfAnEarlierReadAreRefused() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        var handle: Tree?
        try db.read { handle = try $0.tree("t") }
        try db.read { tx throws in
            #expect(throws: StrataError.self) { try tx.get("k", in: handle!) }
            #expect(try tx.get("k", in: try tx.tree("t")) != nil)
        }
    }

    @Test func aSnapshotKeptAfterItsCallIsRefusedEvenWhenItsAccessServesAgain() throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        var kept: ReadSnapshot?
        try db.withSnapshot { kept = $0 }
        try db.withSnapshot { snapshot throws in
            #expect(try snapshot.get("k", inTree: "t") != nil)
            #expect(throws: StrataError.self) { try kept?.get("k", inTree: "t") }
        }
    }

    /// The pool lives in the handle and its transactions let go of the handle while parked: a
    /// reference cycle would keep the handle, its locks and its reader slots alive forever.
    @Test func pooledTransactionsDoNotKeepTheirHandleAlive() throws {
        let dir = TemporaryDirectory()
        weak var released: Database?
        do {
            let db = try Database(path: dir.path)
            try db.write { tx in try tx.put("k", "v", in: try tx.createTree("t")) }
            for _ in 0..<4 { _ = try value(db) }
            try db.withSnapshot { _ in }
            released = db
        }
        #expect(released == nil)
        // And the store opens again for writing: the first handle's locks are gone.
        let again = try Database(path: dir.path)
        #expect(try value(again) == "v")
    }

    @Test func concurrentReadersShareThePoolSafely() async throws {
        let (dir, db) = try store()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try db.write { tx in
            let t = try tx.tree("t")
            for i in 0..<200 { try tx.put(String(format: "n%03d", i), "\(i)", in: t) }
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var found = 0
                    for i in 0..<2000 {
                        let key = String(format: "n%03d", (i * 7 + worker) % 200)
                        let value = try db.read { tx in try tx.get(key, in: try tx.tree("t")).map { String(decoding: $0, as: UTF8.self) } }
                        if value == String(Int(key.dropFirst())!) { found += 1 }
                    }
                    return found
                }
            }
            var total = 0
            for try await found in group { total += found }
            #expect(total == 8000)
        }
    }
}
