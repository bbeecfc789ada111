import Foundation
import Synchronization
import StrataTestFixtures
import Testing
@testable import StrataCore

@Suite(.serialized) struct NotificationTests {
    @Test func streamReportsChangedTreesAndEndsAtTheStoreState() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            try tx.put("k", "0", in: try tx.createTree("a"))
            try tx.put("k", "0", in: try tx.createTree("b"))
        }
        let everything = try db.changes()
        let onlyA = try db.changes(trees: ["a"])
        let start = db.generation
        try db.write { tx in try tx.put("k", "1", in: try tx.tree("b")) }   // b only
        try db.write { tx in try tx.put("k", "2", in: try tx.tree("a")) }   // a only
        try db.write { tx in try tx.dropTree(try tx.tree("b")) }            // b dropped
        let final = db.generation
        var changed = Set<String>()
        for await event in everything {
            changed.formUnion(event.changedTrees)
            #expect(event.generation > start)
            if event.generation == final { break }
        }
        #expect(changed == ["a", "b"])
        var filteredEvents: [CommitEvent] = []
        for await event in onlyA {
            filteredEvents.append(event)
            if event.generation >= start + 2 { break }
        }
        #expect(filteredEvents.allSatisfy { $0.changedTrees == ["a"] })
        // Coalescing may fold later commits in; the view is never behind the commit to "a".
        #expect((filteredEvents.last?.generation ?? 0) >= start + 2)
        everything.cancel()
        onlyA.cancel()
    }

    /// Streams learn what changed from one catalog walk per delivery; it must agree with each
    /// tree's own record, and forget a dropped tree.
    @Test func treeStampsAgreeWithEachTreesRecord() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        // The snapshot the poller reads, against a read transaction's per-tree records (no
        // commit runs between the two).
        func stampsAndRecords() throws -> ([String: UInt64], [String: UInt64]) {
            let stamps = try db.withSnapshot { try $0.treeStamps() }.reduce(into: [String: UInt64]()) { $0[$1.key.name] = $1.value }
            let records = try db.read { tx in
                var records: [String: UInt64] = [:]
                for name in try tx.treeNames() { records[name] = try tx.record(of: try tx.tree(name)).lastModified }
                return records
            }
            return (stamps, records)
        }
        try db.write { tx in
            for name in ["a", "b", "c"] { try tx.put("k", "0", in: try tx.createTree(name)) }
        }
        let created = db.generation
        try db.write { tx in try tx.put("k", "1", in: try tx.tree("b")) }
        var (stamps, records) = try stampsAndRecords()
        #expect(stamps == records)
        #expect(stamps == ["a": created, "b": db.generation, "c": created])
        try db.write { tx in try tx.dropTree(try tx.tree("a")) }
        (stamps, records) = try stampsAndRecords()
        #expect(stamps == records)
        #expect(Set(stamps.keys) == ["b", "c"])
    }

    @Test func cancellingTheTaskEndsTheStream() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let stream = try db.changes()
        let task = Task { () -> Int in
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        try db.write { tx in try tx.put("k", "1", in: try tx.createTree("t")) }
        while stream.generation < db.generation { try await Task.sleep(nanoseconds: 1_000_000) }
        task.cancel()
        #expect(await task.value <= 1)
        #expect(stream.isFinished)
    }

    /// Two tasks iterating one stream at once: the second ends at once, and the first still
    /// gets the next commit (its waiting continuation is never displaced and lost).
    @Test func aSecondConcurrentIterationEndsAndTheFirstKeepsItsEvents() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let stream = try db.changes()
        let first = Task { () -> UInt64? in
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()?.generation
        }
        // Wait until the first task is suspended in next() (its continuation is stored); the
        // bound turns a first iteration that never waits into a failure, not a hang.
        for _ in 0..<10_000 where !stream.hasWaitingIteration { try await Task.sleep(nanoseconds: 1_000_000) }
        try #require(stream.hasWaitingIteration)
        let secondEnded = Atomic<Bool>(false)
        let second = Task { () -> UInt64? in
            var iterator = stream.makeAsyncIterator()
            defer { secondEnded.store(true, ordering: .releasing) }
            return await iterator.next()?.generation
        }
        // The second iteration ends at once; the bound only stops a broken one from hanging the
        // test (it would wait for a commit that never comes).
        for _ in 0..<10_000 where !secondEnded.load(ordering: .acquiring) { try await Task.sleep(nanoseconds: 1_000_000) }
        try db.write { tx in try tx.put("k", "1", in: try tx.createTree("t")) }
        let secondResult = await second.value
        #expect(secondResult == nil)
        // Awaited only when the second iteration behaved: had it displaced the first one's
        // continuation, the first task would never finish.
        if secondResult == nil { #expect(await first.value == db.generation) }
        stream.cancel()
    }

    /// A stream that subscribes while a delivery to its store is under way (after the delivery
    /// took its list of streams) must still hear of the commit that delivery read, even if the
    /// writer then stops: the delivery must not mark that generation as seen by every stream.
    @Test func aStreamSubscribedDuringADeliveryHearsOfTheCommitItRaced() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "0", in: try tx.createTree("t")) }
        let first = try db.changes()
        let late = Mutex<ChangeStream?>(nil)
        ChangeMonitor.shared.runOnceDuringNextDelivery(to: db) {
            // Runs on the poller thread inside the delivery of the next commit.
            late.withLock { $0 = try? db.changes() }
            _ = try? db.write { tx in try tx.put("k", "2", in: try tx.tree("t")) }
        }
        try db.write { tx in try tx.put("k", "1", in: try tx.tree("t")) }
        for _ in 0..<10_000 where late.withLock({ $0 }) == nil { try await Task.sleep(nanoseconds: 1_000_000) }
        let stream = try #require(late.withLock { $0 })
        // No more commits from here on. The late stream subscribed before the second one.
        for _ in 0..<5_000 where stream.generation < db.generation { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(stream.generation == db.generation)
        stream.cancel()
        first.cancel()
    }

    /// A commit whose snapshot the poller cannot take (every reader slot held) must not keep it
    /// polling at its fast interval: before the fix a full reader table made it wake ~20,000
    /// times a second for as long as the slots stayed taken. Once a slot frees, the commit is
    /// delivered.
    @Test func aFullReaderTableNeitherSpinsThePollerNorLosesTheCommit() async throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.readerSlots = 2
        let db = try Database(path: dir.path, options: options)
        defer { db.close() }
        try db.write { tx in try tx.put("k", "0", in: try tx.createTree("t")) }
        let stream = try db.changes()
        defer { stream.cancel() }
        let readers = [try db.beginRead(), try db.beginRead()]
        #expect(throws: StrataError.readerTableFull(capacity: 2)) { _ = try db.beginRead() }
        try db.write { tx in try tx.put("k", "1", in: try tx.tree("t")) }
        try await Task.sleep(nanoseconds: 300_000_000) // past the hot window of a real change
        let before = ChangeMonitor.shared.wakeCount
        try await Task.sleep(nanoseconds: 500_000_000)
        let wakes = ChangeMonitor.shared.wakeCount - before
        // Backed off to the 50 ms idle interval: about 10 wake-ups; hot, about 10,000.
        #expect(wakes < 1_000, "the poller woke \(wakes) times in 0.5 s while it could not read the commit")
        #expect(stream.generation < db.generation)
        #expect(stream.failure == nil)
        for reader in readers { reader.end() }
        for _ in 0..<5_000 where stream.generation < db.generation { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(stream.generation == db.generation)
        #expect(!stream.isFinished)
    }

    /// A newest commit whose catalog is damaged can never be delivered: the streams end, and
    /// `failure` says why, instead of waiting for an event that never comes.
    @Test func aDamagedCatalogEndsTheStreamsWithTheError() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        defer { db.close() }
        try db.write { tx in try tx.put("k", "0", in: try tx.createTree("t")) }
        let stream = try db.changes()
        defer { stream.cancel() }
        let pageSize = db.pageSize
        let path = dir.path + "/data"
        ChangeMonitor.shared.runOnceDuringNextDelivery(to: db) {
            // On the poller thread, before it reads the new snapshot.
            CatalogDamage.breakNewestRootPage(dataPath: path, pageSize: pageSize, generation: db.generation)
        }
        try db.write { tx in try tx.put("k", "1", in: try tx.tree("t")) }
        for _ in 0..<5_000 where !stream.isFinished { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(stream.isFinished)
        guard case StrataError.corruptPage = try #require(stream.failure) else {
            Issue.record("expected corruptPage, got \(String(describing: stream.failure))")
            return
        }
        var events = stream.makeAsyncIterator()
        #expect(await events.next() == nil)
    }

    /// A schedule the poller cannot follow is refused when subscribing: an infinite interval
    /// made it trap converting the pause to a whole number of seconds, a NaN or negative one spin.
    @Test func schedulesThePollerCannotFollowAreMisuse() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        defer { db.close() }
        let bad = [PollingSchedule(fastInterval: .infinity), PollingSchedule(fastInterval: .nan), PollingSchedule(fastInterval: -1),
                   PollingSchedule(hotWindow: .infinity), PollingSchedule(idleInterval: 0), PollingSchedule(idleInterval: 1e10)]
        for schedule in bad {
            #expect(throws: StrataError.self, "\(schedule)") { _ = try db.changes(schedule: schedule) }
        }
        #expect(ChangeMonitor.shared.isWatching(db) == false)
        for good in [PollingSchedule.standard, .lowLatency, .frugal, PollingSchedule(fastInterval: 0, idleInterval: 3600)] {
            try db.changes(schedule: good).cancel()
        }
    }

    /// Filtered streams, driven with plain stamp dictionaries: a watched tree that appears,
    /// changes, disappears or never exists, and unwatched trees that change.
    @Test func aFilteredStreamReportsOnlyItsTreesAppearingChangingAndDisappearing() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let stream = ChangeStream(database: db, trees: ["a", "missing"], identifier: .max, generation: 10, treeStamps: [:])
        var events = stream.makeAsyncIterator()
        stream.deliver(generation: 11, commitTime: 0, stamps: ["b": 11])                    // unwatched tree only
        stream.deliver(generation: 12, commitTime: 0, stamps: ["a": 12, "b": 11])           // "a" appears
        #expect(await events.next()?.changedTrees == ["a"])
        stream.deliver(generation: 13, commitTime: 0, stamps: ["a": 12, "b": 13])           // "a" unchanged
        stream.deliver(generation: 14, commitTime: 0, stamps: ["a": 14, "b": 13])           // "a" changes
        let changed = await events.next()
        // The view was already at 13: that commit changed none of the stream's trees.
        #expect(changed?.changedTrees == ["a"] && changed?.previousGeneration == 13 && changed?.generation == 14)
        stream.deliver(generation: 15, commitTime: 0, stamps: ["b": 13])                    // "a" dropped
        #expect(await events.next()?.changedTrees == ["a"])
        stream.deliver(generation: 15, commitTime: 0, stamps: ["a": 15])                    // not newer: ignored
        stream.deliver(generation: 16, commitTime: 0, stamps: ["b": 16])
        stream.cancel()
        #expect(await events.next() == nil)
        #expect(stream.generation == 16)
    }

    @Test func pollerStopsWhenTheLastObserverLeaves() throws {
        let dir = TemporaryDirectory()
        _ = try Database(path: dir.path)
        let child = try ChildProcess(["poller-lifecycle", dir.path])
        #expect(child.waitFor("before") == "before false")
        #expect(child.waitFor("subscribed") == "subscribed true")
        #expect(child.waitFor("iteration") == "iteration ended")
        #expect(child.waitFor("after") == "after false 0")
        #expect(child.waitForExit() == 0)
    }

    @Test func observerProcessSeesEveryCommitAcrossAStandbyTakeover() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(path: dir.path)
            try db.write { tx in
                try tx.put("k", "v0", in: try tx.createTree("a"))
                try tx.put("k", "x", in: try tx.createTree("b"))
            }
        }
        // generation 1 now; the writer commits 10 more, the standby 10 more: 21 in the end.
        let observer = try ChildProcess(["observe", dir.path, "a", "21"])
        #expect(observer.waitFor("ready") == "ready 1")
        let writer = try ChildProcess(["writer-series", dir.path, "10"])
        #expect(writer.waitFor("committed") == "committed 10")
        let standbyA = try ChildProcess(["standby", dir.path, "11", "20"])
        let standbyB = try ChildProcess(["standby", dir.path, "11", "20"])
        #expect(standbyA.waitFor("waiting") == "waiting")
        #expect(standbyB.waitFor("waiting") == "waiting")
        usleep(100_000)
        #expect(!standbyA.allLines.contains { $0.hasPrefix("writer") })
        #expect(!standbyB.allLines.contains { $0.hasPrefix("writer") })
        writer.killHard()
        // Exactly one standby takes over.
        let deadline = Date().addingTimeInterval(20)
        var taker: ChildProcess?
        while taker == nil && Date() < deadline {
            if standbyA.allLines.contains(where: { $0.hasPrefix("committed") }) { taker = standbyA }
            if standbyB.allLines.contains(where: { $0.hasPrefix("committed") }) { taker = standbyB }
            usleep(2000)
        }
        let winner = try #require(taker)
        let loser = winner === standbyA ? standbyB : standbyA
        #expect(!loser.allLines.contains { $0.hasPrefix("writer") })
        #expect(observer.waitFor("final", timeout: 30) == "final v20")
        let events = observer.allLines.filter { $0.hasPrefix("event") }
        #expect(!events.isEmpty)
        #expect(events.allSatisfy { $0.hasSuffix(" a") })
        #expect(events.last?.hasPrefix("event 21") == true)
        let reader = try Database(path: dir.path, mode: .readOnly)
        try reader.read { tx throws in
            #expect(try tx.string("owner", in: tx.tree("t")) == "standby \(winner.pid)")
        }
        winner.killHard()
        // The other standby takes over from the dead one.
        #expect(loser.waitFor("writer", timeout: 20) == "writer \(loser.pid)")
        loser.killHard()
        observer.killHard()
    }
}

@Suite struct NotificationLifecycleTests {
    @Test func closingTheStoreEndsItsStreams() async throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let stream = try db.changes()
        let task = Task { () -> Int in
            var events = 0
            for await _ in stream { events += 1 }
            return events
        }
        try await Task.sleep(nanoseconds: 20_000_000)
        db.close()
        #expect(await task.value == 0)
        #expect(stream.isFinished)
    }
}
