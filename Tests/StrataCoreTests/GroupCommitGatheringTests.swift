import Foundation
import Testing
@testable import StrataCore

/// A group's leader waits for the callers inside `write` that have not queued yet (woken callers
/// of the previous group coming back), and stops waiting for a while when they do not come.
@Suite struct GroupCommitGatheringTests {
    private func request() -> WriteRequest { WriteRequest { _ in } }

    /// Two callers still on their way: the leader's wait ends when the second one queues, not
    /// at its (long) timeout, so it does not count as a shortfall.
    @Test func leaderWakesWhenTheLastExpectedCallerQueues() throws {
        let queue = WriteQueue()
        queue.callersInside.store(3, ordering: .relaxed)
        #expect(queue.enqueue(request()))
        let late = [request(), request()]
        let arrivals = Thread {
            usleep(20_000)
            for request in late { _ = queue.enqueue(request) }
        }
        arrivals.start()
        let outcome = queue.gatherCallers(timeout: 20_000_000_000)
        #expect(outcome.waited)
        #expect(outcome.queued == 3)
        // Had the wake-up been lost, the wait would have timed out and paused gathering.
        #expect(!queue.isGatheringPaused)
        #expect(queue.takeGroup().count == 3)
    }

    /// Nobody else comes: the wait ends at its timeout, and the next leaders (a fixed number of
    /// them) take their groups without waiting; then gathering resumes.
    @Test func shortfallPausesGatheringForSomeLeaders() throws {
        let queue = WriteQueue()
        queue.callersInside.store(2, ordering: .relaxed)
        #expect(queue.enqueue(request()))
        let first = queue.gatherCallers(timeout: 1_000_000)
        #expect(first.waited && first.queued == 1)
        #expect(queue.isGatheringPaused)
        for _ in 0..<WriteQueue.leadersWithoutGatheringAfterShortfall {
            #expect(!queue.gatherCallers(timeout: 1_000_000).waited)
        }
        #expect(!queue.isGatheringPaused)
        #expect(queue.gatherCallers(timeout: 1_000_000).waited)
    }

    /// Everyone inside is already queued (or only the leader is inside): no wait at all.
    @Test func noWaitWhenEveryCallerIsQueued() throws {
        let queue = WriteQueue()
        queue.callersInside.store(2, ordering: .relaxed)
        #expect(queue.enqueue(request()))
        _ = queue.enqueue(request())
        #expect(!queue.gatherCallers(timeout: 20_000_000_000).waited)
        #expect(!queue.isGatheringPaused)
    }

    /// A store whose commits do not sync never gathers (its commits are as short as a wake-up).
    @Test func unsyncedStoresDoNotGather() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.durability = .none
        let db = try Database(path: dir.path, options: options)
        let queue = try #require(db.writer).writeQueue
        #expect(!queue.gathers)
        queue.callersInside.store(3, ordering: .relaxed)
        #expect(queue.enqueue(WriteRequest { _ in }))
        #expect(!queue.gatherCallers(timeout: 20_000_000_000).waited)
        queue.callersInside.store(0, ordering: .relaxed)
        _ = queue.takeGroup()
        _ = queue.releaseLead()
        db.close()
    }

    /// Many threads writing in a loop: every acknowledged write is present, and the grouped
    /// commits carried more than two requests on average (callers were gathered, not left for
    /// the next commit). Printed, not asserted: grouping depends on the scheduler.
    @Test func writersInALoopShareCommits() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in _ = try tx.createTree("g") }
        let threads = 16, perThread = 50
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                for i in 0..<perThread {
                    _ = try? db.write { tx in try tx.put("\(thread)-\(i)", "v", in: try tx.tree("g")) }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let statistics = db.groupCommitStatistics
        let count = try db.read { tx in try tx.count(tx.tree("g")) }
        #expect(count == threads * perThread)
        let queue = try #require(db.writer).writeQueue
        print("[writersInALoopShareCommits] \(threads * perThread) writes in \(db.generation - 1) commits; grouped commits \(statistics.commits) carrying \(statistics.requests) requests; gathering waits \(queue.gatheringWaitsMet.load(ordering: .relaxed)) met, \(queue.gatheringWaitsShort.load(ordering: .relaxed)) short")
    }
}
