import Foundation
import Testing
@testable import StrataCore

/// Real child processes (`strata-child`) sharing a store with the test process.
@Suite(.serialized) struct MultiProcessTests {
    @Test func readerProcessSeesNewCommitsWithoutReopening() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "0", in: try tx.createTree("t")) }
        let child = try ChildProcess(["watch", dir.path, "20"])
        #expect(child.waitFor("ready") == "ready")
        for i in 1...20 {
            try db.write { tx in try tx.put("k", String(i), in: try tx.tree("t")) }
            usleep(5000)
        }
        #expect(child.waitForExit() == 0)
        #expect(child.allLines.last == "seen 20")
    }

    @Test func readerProcessKeepsItsSnapshotWhileWriterCommits() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "old", in: try tx.createTree("t")) }
        let child = try ChildProcess(["snapshot", dir.path])
        #expect(child.waitFor("value") == "value old")
        for round in 0..<30 {
            try db.write { tx in
                let t = try tx.tree("t")
                try tx.put("k", "new", in: t)
                for i in 0..<40 { try tx.put("churn \(round) \(i)", [UInt8](repeating: UInt8(round), count: 300), in: t) }
            }
        }
        child.send("again")
        #expect(child.waitFor("value") == "value old")
        #expect(child.waitFor("fresh") == "fresh new")
        #expect(child.waitForExit() == 0)
    }

    @Test func secondWriterProcessIsRefusedWithPid() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let child = try ChildProcess(["try-write", dir.path])
        #expect(child.waitFor("locked") == "locked \(getpid())")
        child.waitForExit()
        db.close()
        let holder = try ChildProcess(["hold-writer", dir.path, "1"])
        #expect(holder.waitFor("committed") == "committed 1")
        #expect(throws: StrataError.writerLocked(path: dir.path, holderPID: holder.pid)) { _ = try Database(path: dir.path) }
        holder.killHard()
    }

    @Test func killedWriterLeavesExactlyItsCommittedData() throws {
        let dir = TemporaryDirectory()
        let holder = try ChildProcess(["hold-writer", dir.path, "25"])
        #expect(holder.waitFor("committed") == "committed 25")
        holder.killHard()
        let db = try Database(path: dir.path) // the kernel released the writer lock
        try db.read { tx throws in #expect(try tx.string("k", in: tx.tree("t")) == "v25") }
        #expect(db.generation == 25)
        #expect(try db.check().isClean)
        try db.write { tx in try tx.put("k", "v26", in: try tx.tree("t")) }
    }

    @Test func killedReaderDoesNotPinPagesForever() throws {
        let (dir, db) = try unsyncedStore()
        func rewrite() throws {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                for i in 0..<200 { try tx.put("key \(i)", [UInt8](repeating: UInt8(i % 256), count: 100), in: t) }
            }
        }
        try rewrite()
        let reader = try ChildProcess(["pin-reader", dir.path])
        #expect(reader.waitFor("pinned") == "pinned 1")
        for _ in 0..<30 { try rewrite() }
        let pinnedCount = try db.read { $0.pageCount }
        #expect(try db.readerReport().contains { $0.pid == reader.pid && $0.snapshot == 1 })
        reader.killHard()
        #expect(db.reapDeadReaders() == 1)
        #expect(try !db.readerReport().contains { $0.pid == reader.pid })
        // With the pin gone, rewriting reuses pages: the file stops growing.
        for _ in 0..<10 { try rewrite() }
        let settled = try db.read { $0.pageCount }
        for _ in 0..<50 { try rewrite() }
        #expect(try db.read { $0.pageCount } == settled)
        #expect(settled <= pinnedCount + 4)
        #expect(try db.check().isClean)
    }
}

@Suite(.serialized) struct ReaderHealthTests {
    @Test func longLivedReaderIsReportedWithLagAndPinnedPages() throws {
        let reported = ReportedReaders()
        let (dir, db) = try unsyncedStore { options in
            options.longLivedReaderLimit = 0.05
            options.onLongLivedReaders = { readers in reported.add(readers) }
        }
        func rewrite() throws {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                for i in 0..<100 { try tx.put("key \(i)", [UInt8](repeating: UInt8(i % 256), count: 100), in: t) }
            }
        }
        try rewrite()
        let pinner = try ChildProcess(["pin-reader", dir.path])
        #expect(pinner.waitFor("pinned") == "pinned 1")
        usleep(100_000)
        for _ in 0..<5 { try rewrite() }
        let info = try #require(try db.readerReport().first { $0.pid == pinner.pid })
        #expect(info.snapshot == 1 && info.lag == 5 && info.isAlive)
        #expect(info.pinnedPages > 0)
        #expect(info.age >= 0.05)
        #expect(reported.pids.contains(pinner.pid))
        pinner.killHard()
        let dead = try #require(try db.readerReport().first { $0.pid == pinner.pid })
        #expect(!dead.isAlive)
    }
}

final class ReportedReaders: @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Int32] = []
    func add(_ readers: [ReaderInfo]) { lock.withLock { seen += readers.map(\.pid) } }
    var pids: [Int32] { lock.withLock { seen } }
}
