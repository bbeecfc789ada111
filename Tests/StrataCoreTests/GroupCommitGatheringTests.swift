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
            // Only once the leader waits, so that the test does not depend on timing.
            while !queue.isGathering { usleep(1_000) }
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
        // The next wait comes up short again (no stray wake-up is left on the semaphore), and
        // the pause doubles.
        #expect(queue.gatherCallers(timeout: 1_000_000).waited)
        #expect(queue.gatheringWaitsShort.load(ordering: .relaxed) == 2)
        #expect(queue.gatheringWaitsMet.load(ordering: .relaxed) == 0)
        var skipped = 0
        while !queue.gatherCallers(timeout: 1_000_000).waited { skipped += 1 }
        #expect(skipped == 2 * WriteQueue.leadersWithoutGatheringAfterShortfall)
    }

    /// Callers that reach the target just as a wait times out leave no wake-up behind: after many
    /// such races, a wait with nobody coming still comes up short.
    @Test func racesAtTheTimeoutLeaveNoStrayWakeUp() throws {
        let queue = WriteQueue()
        for round in 0..<200 {
            queue.callersInside.store(2, ordering: .relaxed)
            #expect(queue.enqueue(request()))
            let go = DispatchSemaphore(value: 0), arrived = DispatchSemaphore(value: 0)
            let arrival = Thread {
                go.wait()
                usleep(UInt32(round % 40) * 5)
                _ = queue.enqueue(WriteRequest { _ in })
                arrived.signal()
            }
            arrival.start()
            go.signal()
            // Around the 100 µs timeout the arrival races the wait's end (or comes before it).
            while true {
                let outcome = queue.gatherCallers(timeout: 100_000)
                if outcome.waited || outcome.queued == 2 { break }
            }
            arrived.wait()
            #expect(queue.takeGroup().count == 2)
            #expect(queue.releaseLead() == nil)
        }
        queue.callersInside.store(2, ordering: .relaxed)
        while queue.isGatheringPaused { _ = queue.gatherCallers(timeout: 1) }
        let shortBefore = queue.gatheringWaitsShort.load(ordering: .relaxed)
        #expect(queue.enqueue(request()))
        #expect(queue.gatherCallers(timeout: 1_000_000).waited)
        #expect(queue.gatheringWaitsShort.load(ordering: .relaxed) == shortBefore + 1, "a stray wake-up ended the wait")
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

    /// Many threads writing in a loop at full durability: every write is present and the count
    /// of callers inside is back at zero. How many requests a commit carried is printed, not
    /// asserted: grouping depends on the scheduler.
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
        #expect(queue.callersInside.load(ordering: .relaxed) == 0)
        print("[writersInALoopShareCommits] \(threads * perThread) writes in \(db.generation - 1) commits; grouped commits \(statistics.commits) carrying \(statistics.requests) requests; gathering waits \(queue.gatheringWaitsMet.load(ordering: .relaxed)) met, \(queue.gatheringWaitsShort.load(ordering: .relaxed)) short")
    }
}
