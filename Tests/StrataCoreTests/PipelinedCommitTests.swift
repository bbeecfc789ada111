import Foundation
import Synchronization
import Testing
@_spi(Testing) @testable import StrataCore

/// A data file whose syncs can be held (and then failed) by the test: the sync of a commit runs
/// without the writer lock (`PendingCommit`), so a held sync shows what the next transaction,
/// readers and reopening see meanwhile.
final class GatedSyncIO: DataFileIO, @unchecked Sendable {
    let inner: any DataFileIO
    /// When set, the next sync waits for `release` and then fails with this error (or passes
    /// with nil).
    private let plan = Mutex<(hold: Bool, failure: StrataError?)>((false, nil))
    private let released = DispatchSemaphore(value: 0)
    /// Signalled when a held sync has started waiting.
    let holding = DispatchSemaphore(value: 0)

    init(inner: any DataFileIO) { self.inner = inner }

    var path: String { inner.path }

    func holdNextSync() { plan.withLock { $0 = (true, nil) } }

    /// Lets the held sync finish: it fails with `failure`, or syncs if nil.
    func release(failing failure: StrataError?) {
        plan.withLock { $0.failure = failure }
        released.signal()
    }

    func writeGathered(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        try inner.writeGathered(buffers, at: offset)
    }

    func syncData() throws {
        let holds = plan.withLock { state -> Bool in
            defer { state.hold = false }
            return state.hold
        }
        if holds {
            holding.signal()
            released.wait()
            if let failure = plan.withLock({ $0.failure }) { throw failure }
        }
        try inner.syncData()
    }

    func setSize(_ size: UInt64) throws { try inner.setSize(size) }
    func size() throws -> UInt64 { try inner.size() }
}

/// Pipelined commits: while a commit syncs, the next write transaction already runs on top of it,
/// but writes nothing until that sync returned, fails if it failed, and readers see neither
/// before their syncs returned.
@Suite(.serialized) struct PipelinedCommitTests {
    /// A store holding base = 0 in tree "t", with syncs the test can hold.
    private func open(_ dir: TemporaryDirectory) throws -> (Database, GatedSyncIO) {
        let box = IOBox<GatedSyncIO>()
        var options = DatabaseOptions()
        options.durability = .full
        options.dataFileIO = { inner in
            let io = GatedSyncIO(inner: inner)
            box.io = io
            return io
        }
        let db = try Database(path: dir.path, options: options)
        try db.write { tx in try tx.put("base", "0", in: try tx.createTree("t")) }
        return (db, try #require(box.io))
    }

    /// Runs `body` on a new thread; the returned group is left when it is done.
    private func background(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        group.enter()
        Thread {
            body()
            group.leave()
        }.start()
        return group
    }

    /// Writes a = 1 on another thread, its sync held; returns once that sync waits.
    private func holdFirstCommit(_ db: Database, _ io: GatedSyncIO) -> (DispatchGroup, Outcome) {
        io.holdNextSync()
        let outcome = Outcome()
        let done = background { do { try db.write { tx in try tx.put("a", "1", in: try tx.tree("t")) } } catch { outcome.error.withLock { $0 = error } } }
        io.holding.wait()
        return (done, outcome)
    }

    /// Commits `transaction` on another thread.
    private func commitInBackground(_ transaction: WriteTransaction) -> (DispatchGroup, Outcome) {
        let outcome = Outcome()
        let transfer = UncheckedBox(transaction)
        let done = background { do { try transfer.value.commit() } catch { outcome.error.withLock { $0 = error } } }
        return (done, outcome)
    }

    private func value(_ db: Database, _ key: String) throws -> String? {
        try db.read { tx in try tx.get(key, in: try tx.tree("t")).map { String(decoding: $0.bytes, as: UTF8.self) } }
    }

    @Test func nextTransactionBuildsOnASyncingCommitAndPublishesAfterIt() throws {
        let dir = TemporaryDirectory()
        let (db, io) = try open(dir)
        let before = db.generation

        let (firstDone, first) = holdFirstCommit(db, io)
        // The first commit is written and syncing: the writer lock is free, and the next
        // transaction sees the first one's changes; readers do not, nor does the generation.
        let second = try db.beginWrite()
        #expect(try second.get("a", in: try second.tree("t"))?.bytes == Array("1".utf8))
        try second.put("b", "2", in: try second.tree("t"))
        #expect(db.generation == before)
        #expect(try value(db, "a") == nil)
        let (secondDone, secondResult) = commitInBackground(second)
        // The second commit waits for the first sync: nothing of it is published either.
        #expect(secondDone.wait(timeout: .now() + 0.3) == .timedOut)
        #expect(db.generation == before)

        io.release(failing: nil)
        firstDone.wait()
        secondDone.wait()
        #expect(first.error.withLock { $0 } == nil)
        #expect(secondResult.error.withLock { $0 } == nil)
        #expect(db.generation == before + 2)
        #expect(try value(db, "a") == "1")
        #expect(try value(db, "b") == "2")
        db.close()

        let reopened = try Database(path: dir.path)
        #expect(reopened.skippedCommit == nil)
        #expect(try value(reopened, "a") == "1")
        #expect(try value(reopened, "b") == "2")
        #expect(try reopened.check().problems.isEmpty)
    }

    @Test func transactionBuiltOnAFailedSyncFailsAndTheStoreStaysAtTheLastDurableCommit() throws {
        let dir = TemporaryDirectory()
        let (db, io) = try open(dir)
        let before = db.generation

        let (firstDone, first) = holdFirstCommit(db, io)
        let second = try db.beginWrite()
        try second.put("b", "2", in: try second.tree("t"))
        let (secondDone, secondResult) = commitInBackground(second)

        io.release(failing: StrataError.io(operation: "fdatasync", path: dir.path + "/data", errno: EIO))
        firstDone.wait()
        secondDone.wait()
        // Both fail: the second was built on a state that never became durable.
        #expect(first.error.withLock { $0 } != nil)
        #expect(secondResult.error.withLock { $0 } != nil)
        #expect(db.generation == before)
        #expect(try value(db, "a") == nil)
        #expect(try value(db, "b") == nil)

        // The handle goes on from the last durable commit.
        try db.write { tx in try tx.put("c", "3", in: try tx.tree("t")) }
        #expect(db.generation == before + 1)
        #expect(try value(db, "c") == "3")
        #expect(try value(db, "a") == nil)
        db.close()

        let reopened = try Database(path: dir.path)
        #expect(try value(reopened, "base") == "0")
        #expect(try value(reopened, "a") == nil)
        #expect(try value(reopened, "b") == nil)
        #expect(try value(reopened, "c") == "3")
        #expect(try reopened.check().problems.isEmpty)
    }

    /// A write transaction that changed nothing but read a commit still syncing succeeds only if
    /// that commit does.
    @Test func unchangedTransactionOnAFailedSyncFails() throws {
        let dir = TemporaryDirectory()
        let (db, io) = try open(dir)
        let (firstDone, _) = holdFirstCommit(db, io)
        let reader = try db.beginWrite()
        #expect(try reader.get("a", in: try reader.tree("t")) != nil)
        let (done, result) = commitInBackground(reader)
        io.release(failing: StrataError.io(operation: "fdatasync", path: dir.path + "/data", errno: EIO))
        firstDone.wait()
        done.wait()
        #expect(result.error.withLock { $0 } != nil)
        db.close()
    }

    /// Group commit: while a commit syncs, the next group runs on top of it; a failed sync fails
    /// every caller of that group too (it was built on the failed commit), while a group that
    /// begins after the failure builds on the last durable commit and succeeds. Each caller's
    /// outcome matches the store, live and reopened.
    @Test func groupBuiltOnAFailedSyncFailsEveryCaller() throws {
        let dir = TemporaryDirectory()
        let (db, io) = try open(dir)
        let before = db.generation
        let (firstDone, first) = holdFirstCommit(db, io)
        // A transaction held open keeps the writer lock, so the requests below queue (and the
        // first group begins on top of the syncing commit when it ends).
        let holder = try db.beginWrite()
        let callers = 6
        let outcomes = (0..<callers).map { _ in Outcome() }
        let written = DispatchGroup()
        for caller in 0..<callers {
            written.enter()
            Thread {
                do { try db.write { tx in try tx.put("g\(caller)", "v", in: try tx.tree("t")) } } catch {
                    outcomes[caller].error.withLock { $0 = error }
                }
                written.leave()
            }.start()
        }
        let queue = try #require(db.writer).writeQueue
        while queue.callersInside.load(ordering: .relaxed) < callers { usleep(1_000) }
        holder.abort()
        // The first group waits for the held sync before it writes anything: nothing returns.
        #expect(written.wait(timeout: .now() + 0.3) == .timedOut)
        #expect(db.generation == before)
        io.release(failing: StrataError.io(operation: "fdatasync", path: dir.path + "/data", errno: EIO))
        firstDone.wait()
        written.wait()
        #expect(first.error.withLock { $0 } != nil)
        let failed = (0..<callers).filter { outcomes[$0].error.withLock { $0 } != nil }
        #expect(!failed.isEmpty, "the group built on the failed commit failed")
        #expect(try value(db, "a") == nil)
        for caller in 0..<callers { #expect(try (value(db, "g\(caller)") == nil) == failed.contains(caller)) }
        db.close()
        let reopened = try Database(path: dir.path)
        #expect(reopened.skippedCommit == nil)
        #expect(try value(reopened, "a") == nil)
        for caller in 0..<callers { #expect(try (value(reopened, "g\(caller)") == nil) == failed.contains(caller)) }
        #expect(try reopened.check().problems.isEmpty)
    }

    /// `close()` while a commit syncs does not wait for it, and keeps the writer locks until its
    /// sync returned and it is published: no other writer may open the store in between (it
    /// would adopt a commit that is not durable yet, under a generation the syncing one then
    /// overwrites).
    @Test func closeDuringASyncKeepsTheWriterLockUntilThePublication() throws {
        let dir = TemporaryDirectory()
        let (db, io) = try open(dir)
        let before = db.generation
        let (firstDone, first) = holdFirstCommit(db, io)
        db.close()
        #expect(throws: StrataError.writerLocked(path: dir.path, holderPID: getpid())) { _ = try Database(path: dir.path) }
        io.release(failing: nil)
        firstDone.wait()
        #expect(first.error.withLock { $0 } == nil)
        let reopened = try Database(path: dir.path)
        #expect(reopened.generation == before + 1)
        #expect(reopened.skippedCommit == nil)
        #expect(try value(reopened, "a") == "1")
    }
}

/// What a background call threw, if anything.
final class Outcome: Sendable {
    let error = Mutex<(any Error)?>(nil)
}

/// Moves a value to another thread in a test that hands it over once.
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
