import Foundation
import Testing
@testable import StrataCore
import StrataTestFixtures

/// The reader slot a `SnapshotReader` keeps across `withSnapshot` calls (see `SnapshotReader` and
/// "Sticky slots" in `ReaderTable`): it protects its snapshot while one lives, holds back nothing
/// between snapshots, never makes the table full for other reads, and dies with its process.
@Suite(.serialized) struct StickySlotTests {
    func rewrite(_ db: Database, _ round: Int) throws {
        try db.write { tx in
            let t = try tx.openOrCreateTree("t")
            for i in 0..<200 { try tx.put("key \(i)", [UInt8](repeating: UInt8(truncatingIfNeeded: round), count: 100), in: t) }
        }
    }

    @Test func theWriterDoesNotReusePagesOfALiveStickySnapshot() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try rewrite(db, 1)
        try db.withSnapshot { _ in } // the reader and its slot are now pooled
        #expect(db.oldestReaderSnapshot == nil)
        try db.withSnapshot { snapshot throws in
            let generation = snapshot.generation
            let before = try #require(try snapshot.get("key 7", inTree: "t")).bytes
            #expect(db.oldestReaderSnapshot == generation)
            // Enough rewrites that every page of the snapshot would be reused if it were not pinned.
            for round in 2..<40 { try rewrite(db, round) }
            #expect(try snapshot.get("key 7", inTree: "t")?.bytes == before)
            #expect(before == [UInt8](repeating: 1, count: 100))
            var entries = 0
            try snapshot.scan(inTree: "t") { _, value in
                #expect(value.bytes == before)
                entries += 1
                return true
            }
            #expect(entries == 200)
        }
        // Between snapshots the kept slot reads as idle: it holds back no page.
        #expect(db.oldestReaderSnapshot == nil)
        let mine = try db.readerReport().filter(\.isThisHandle)
        #expect(!mine.isEmpty && mine.allSatisfy { $0.snapshot == 0 })
        #expect(try db.check().isClean)
    }

    @Test func keptSlotsNeverMakeTheTableFullForOtherReads() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.readerSlots = 2
        let db = try Database(path: dir.path, options: options)
        try db.write { tx in try tx.put("k", "v", in: try tx.createTree("t")) }
        // Two snapshots at once: two readers, each keeping a slot once parked.
        try db.withSnapshot { outer throws in
            try db.withSnapshot { inner throws in #expect(inner.generation == outer.generation) }
        }
        #expect(try db.readerReport().filter { $0.isThisHandle && $0.snapshot == 0 }.count == 2)
        // Both slots are taken back from the idle readers for transactions that need them.
        let first = try db.beginRead()
        let second = try db.beginRead()
        #expect(throws: StrataError.readerTableFull(capacity: 2)) { _ = try db.beginRead() }
        first.end()
        second.end()
        try db.withSnapshot { snapshot throws in #expect(try snapshot.get("k", inTree: "t") != nil) }
    }

    @Test func manyThreadsLeaveOnlyIdleBoundedSlots() async throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }  // the store directory outlives the handle
        try rewrite(db, 1)
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var failed = 0
                    for _ in 0..<500 {
                        let found = try? db.withSnapshot { try $0.get("key 3", inTree: "t") != nil }
                        if found != true { failed += 1 }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
        let mine = try db.readerReport().filter(\.isThisHandle)
        // Owned slots are bounded by the readers that ran at once (at most one per task), and
        // none holds back pages once the calls returned.
        #expect(mine.count <= 16)
        #expect(mine.allSatisfy { $0.snapshot == 0 })
        #expect(db.oldestReaderSnapshot == nil)
        // Closing gives every kept slot back.
        db.close()
        #expect(try db.readers.entries(current: db.generation, now: 0).filter(\.isThisHandle).isEmpty)
    }

    @Test func aKilledProcessesKeptSlotIsReaped() throws {
        let (dir, db) = try unsyncedStore()
        try rewrite(db, 1)
        let child = try ChildProcess(["snapshot-slot", dir.path])
        #expect(child.waitFor("idle") == "idle")
        // Idle kept slot: claimed, alive, holding back nothing.
        let idle = try #require(try db.readerReport().first { $0.pid == child.pid })
        #expect(idle.snapshot == 0 && idle.isAlive)
        #expect(db.oldestReaderSnapshot == nil)
        try rewrite(db, 2)
        child.send("read")
        let generation = db.generation
        #expect(child.waitFor("reading") == "reading \(generation)")
        #expect(db.oldestReaderSnapshot == generation)
        child.killHard()
        #expect(db.reapDeadReaders() == 1)
        #expect(try !db.readerReport().contains { $0.pid == child.pid })
        #expect(db.oldestReaderSnapshot == nil)
        // With the slot gone, rewriting reuses pages: the file stops growing.
        for round in 3..<13 { try rewrite(db, round) }
        let settled = try db.read { $0.pageCount }
        for round in 13..<40 { try rewrite(db, round) }
        #expect(try db.read { $0.pageCount } == settled)
    }

    /// A `ReadSnapshot` let out of its `withSnapshot` call (its methods then throw `misuse`) keeps
    /// its reader alive after the handle is gone. The handle gave the reader's slot back when it
    /// was destroyed; dropping the snapshot later must not write that slot, which by then may be
    /// another reader's: clearing it would let the writer reuse that reader's pages.
    @Test func aSnapshotOutlivingItsHandleLeavesAnotherReadersSlotAlone() throws {
        let (dir, writer) = try unsyncedStore()
        try rewrite(writer, 1)
        var readerHandle: Database? = try Database(path: dir.path, mode: .readOnly)
        weak let weakHandle = readerHandle
        var escaped: ReadSnapshot? = try readerHandle!.withSnapshot { $0 }
        readerHandle = nil
        #expect(weakHandle == nil)
        // Another handle claims the slot the destroyed one gave back, and reads.
        let tx = try writer.beginRead()
        let generation = tx.generation
        let t = try tx.tree("t")
        #expect(writer.oldestReaderSnapshot == generation)
        escaped = nil
        _ = escaped
        #expect(writer.oldestReaderSnapshot == generation)
        for round in 2..<40 { try rewrite(writer, round) }
        #expect(try tx.get("key 7", in: t)?.bytes == [UInt8](repeating: 1, count: 100))
        tx.end()
    }
}
