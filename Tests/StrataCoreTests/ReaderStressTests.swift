import Foundation
import Synchronization
import Testing
@testable import StrataCore

/// Hundreds of reader processes started and SIGKILLed at random moments (while opening, holding a
/// snapshot, or between transactions) while a writer commits: the reader table never wedges, dead
/// slots are reclaimed, and once they are the file stops growing. A reader that holds one snapshot
/// is reported as long-lived, and its space comes back when it leaves. Half of the killed readers
/// read through `withSnapshot`, keeping one reader slot across snapshots; they check in every
/// snapshot that it holds one commit's values (`rewrite`'s invariant), and are killed inside a
/// snapshot or with the slot idle between two.
///
/// `STRATA_READER_KILLS` sets the number of reader processes killed (default 150).
@Suite(.serialized) struct ReaderStressTests {
    /// Commits in a background thread until stopped; counts commits and errors.
    final class BackgroundWriter: @unchecked Sendable {
        private let db: Database
        private let stopped = Atomic<Bool>(false)
        let commits = Atomic<Int>(0)
        private let failure = Mutex<String?>(nil)
        private let finished = DispatchSemaphore(value: 0)

        init(_ db: Database) { self.db = db }

        func start() {
            Thread.detachNewThread { [self] in
                var round = 0
                while !stopped.load(ordering: .relaxed) {
                    round += 1
                    do {
                        try ReaderStressTests.rewrite(db, round: round)
                        commits.add(1, ordering: .relaxed)
                    } catch {
                        failure.withLock { $0 = "\(error)" }
                        break
                    }
                    usleep(2000)
                }
                finished.signal()
            }
        }

        func stop() -> String? {
            stopped.store(true, ordering: .relaxed)
            finished.wait()
            return failure.withLock { $0 }
        }
    }

    /// Rewrites every value: each commit frees about as many pages as it allocates, so the file only
    /// grows while some snapshot keeps the freed pages from being reused.
    static func rewrite(_ db: Database, round: Int) throws {
        try db.write { tx in
            let t = try tx.openOrCreateTree("t")
            for i in 0..<150 { try tx.put("key \(i)", [UInt8](repeating: UInt8(truncatingIfNeeded: round &+ i), count: 120), in: t) }
        }
    }

    static func pageCount(_ db: Database) throws -> UInt64 { try db.read { $0.pageCount } }

    /// The kinds of reader process the stress test starts and kills.
    enum ReaderKind: CaseIterable {
        /// `pin-reader`: holds one `beginRead` snapshot until killed.
        case pinning
        /// `churn-reader`: begins and ends `db.read` transactions in a loop.
        case churning
        /// `snapshot-reader`: reads through `withSnapshot` in a loop, so its handle keeps one
        /// reader slot across snapshots, and checks `rewrite`'s invariant in each snapshot; killed
        /// anywhere in the loop, or after it stopped inside a snapshot or between two.
        case keptSlotLooping, keptSlotHolding, keptSlotIdle

        func arguments(_ store: String) -> [String] {
            switch self {
            case .pinning: ["pin-reader", store]
            case .churning: ["churn-reader", store]
            case .keptSlotLooping: ["snapshot-reader", store, "loop"]
            case .keptSlotHolding: ["snapshot-reader", store, "hold"]
            case .keptSlotIdle: ["snapshot-reader", store, "idle"]
            }
        }
        var readyLine: String { self == .pinning ? "pinned" : "ready" }
    }

    /// What the killed readers were doing, and what went wrong in them.
    struct KillTally {
        var total = 0, whileOpening = 0, pinned = 0, churning = 0
        /// Kept-slot readers killed at a random moment of their loop, inside a snapshot they were
        /// told to stay in, and while idle between snapshots (slot kept, snapshot 0).
        var keptLooping = 0, keptMidSnapshot = 0, keptIdle = 0
        /// Readers that exited on their own before being killed (an inconsistent snapshot exits
        /// with status 3, any other error with 2), with their last lines.
        var failures: [String] = []

        /// Kills `child` and records a reader that had already exited on its own.
        mutating func kill(_ child: ChildProcess, _ kind: ReaderKind, seed: UInt64) {
            child.killHard()
            total += 1
            if child.process.terminationReason == .exit {
                let status = child.process.terminationStatus
                let what = status == 3 ? "read an inconsistent snapshot" : "exited with status \(status)"
                failures.append("\(kind) reader \(child.pid) \(what) (seed \(seed)): \(child.allLines.suffix(2))")
            }
        }
    }

    @Test func killedReadersNeverWedgeTheTableAndTheirSpaceComesBack() throws {
        let total = environmentCount("STRATA_READER_KILLS", default: 150)
        let seed = testSeed("readerStress")
        var random = SeededGenerator(seed: seed)
        let (dir, db) = try unsyncedStore { options in
            // Far fewer slots than readers: without reclaiming dead slots the table would fill up.
            options.readerSlots = 12
        }
        try ReaderStressTests.rewrite(db, round: 0)
        let writer = BackgroundWriter(db)
        writer.start()
        var tally = KillTally()
        var live: [(child: ChildProcess, kind: ReaderKind)] = []
        let started = Date()
        while tally.total < total {
            // Top up to 6 readers, started together, 2 in 3 reading through `withSnapshot`;
            // some are killed somewhere inside opening (lock file set-up, slot claim, first
            // snapshot), the others once they read.
            var batch: [(child: ChildProcess, kind: ReaderKind, early: Bool)] = []
            for _ in live.count..<6 {
                let kind = [ReaderKind.pinning, .churning, .keptSlotLooping, .keptSlotHolding, .keptSlotIdle, .keptSlotLooping]
                    .randomElement(using: &random)!
                let child = try ChildProcess(kind.arguments(dir.path))
                batch.append((child, kind, Int.random(in: 0..<5, using: &random) == 0))
            }
            for (child, kind, early) in batch {
                if early {
                    usleep(UInt32.random(in: 0...15_000, using: &random))
                    tally.kill(child, kind, seed: seed)
                    tally.whileOpening += 1
                    continue
                }
                let line = child.waitFor(kind.readyLine, timeout: 30)
                guard let line, !line.hasPrefix("error") else {
                    Issue.record("reader \(tally.total) could not begin (seed \(seed)): \(String(describing: line))")
                    tally.kill(child, kind, seed: seed)
                    continue
                }
                live.append((child, kind))
            }
            // Kill about half of the live readers, holding a snapshot or between transactions; a
            // kept-slot reader anywhere in its loop, or once it stays inside a snapshot (killed
            // after some commits) or stopped between two.
            for _ in 0..<max(1, live.count / 2) where !live.isEmpty {
                let (victim, kind) = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                switch kind {
                case .pinning: tally.pinned += 1
                case .churning: tally.churning += 1
                case .keptSlotLooping: tally.keptLooping += 1
                case .keptSlotHolding:
                    let line = victim.waitFor("holding")
                    #expect(line?.hasPrefix("holding") == true, "kept-slot reader did not hold a snapshot (seed \(seed)): \(String(describing: line))")
                    usleep(UInt32.random(in: 0...20_000, using: &random))
                    tally.keptMidSnapshot += 1
                case .keptSlotIdle:
                    let line = victim.waitFor("idle")
                    #expect(line == "idle", "kept-slot reader did not stop between snapshots (seed \(seed)): \(String(describing: line))")
                    tally.keptIdle += 1
                }
                tally.kill(victim, kind, seed: seed)
            }
        }
        for (child, kind) in live { tally.kill(child, kind, seed: seed) }
        live.removeAll()
        #expect(tally.failures.isEmpty, "\(tally.failures.count) reader(s) failed:\n\(tally.failures.prefix(5).joined(separator: "\n"))")
        // The writer reaps on its own (at most once a second) when a dead reader's old snapshot
        // pins pages; dead readers that held no snapshot (idle kept slots included) pin nothing
        // and wait for a reap (or for a new reader that needs their slot).
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && db.oldestReaderSnapshot != nil { usleep(20_000) }
        #expect(db.oldestReaderSnapshot == nil, "dead readers still pin snapshots: \((try? db.readerReport()) ?? [])")
        let idleDead = db.reapDeadReaders()
        let leftover = try db.readerReport().filter { !$0.isThisHandle }
        #expect(leftover.isEmpty, "dead reader slots not reclaimed: \(leftover)")
        // With no reader left, the file stops growing.
        let before = writer.commits.load(ordering: .relaxed)
        while writer.commits.load(ordering: .relaxed) < before + 20 { usleep(5000) }
        let settled = try ReaderStressTests.pageCount(db)
        while writer.commits.load(ordering: .relaxed) < before + 120 { usleep(5000) }
        let later = try ReaderStressTests.pageCount(db)
        let failure = writer.stop()
        #expect(failure == nil, "writer failed: \(failure ?? "")")
        #expect(later == settled, "the file kept growing after every reader was gone: \(settled) -> \(later) pages")
        #expect(try db.check().isClean)
        // And new readers begin at once, with a transaction or a kept slot.
        let fresh = try ChildProcess(["pin-reader", dir.path])
        #expect(fresh.waitFor("pinned") != nil)
        fresh.killHard()
        let freshKept = try ChildProcess(["snapshot-reader", dir.path, "loop"])
        #expect(freshKept.waitFor("ready")?.hasPrefix("ready") == true)
        freshKept.killHard()
        let seconds = Date().timeIntervalSince(started)
        print("[readerStress] \(tally.total) reader processes killed (\(tally.whileOpening) while opening, \(tally.pinned) holding a snapshot, \(tally.churning) churning, kept-slot withSnapshot readers: \(tally.keptLooping) anywhere in their loop, \(tally.keptMidSnapshot) inside a held snapshot, \(tally.keptIdle) idle between snapshots) with 12 slots in \(String(format: "%.1f", seconds)) s; \(idleDead) idle dead slot(s) left for reapDeadReaders; writer made \(writer.commits.load(ordering: .relaxed)) commits; file settled at \(later) pages")
    }

    /// The same in one process, deterministically: a snapshot held across 40 commits leaves a free
    /// list of several leaves; once it ends, every page a commit needs can be reused.
    @Test func fileStopsGrowingAfterALongSnapshotEnds() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        try ReaderStressTests.rewrite(db, round: 0)
        let pin = try db.beginRead()
        for round in 1...40 { try ReaderStressTests.rewrite(db, round: round) }
        pin.end()
        for round in 41...60 { try ReaderStressTests.rewrite(db, round: round) }
        let settled = try ReaderStressTests.pageCount(db)
        for round in 61...360 { try ReaderStressTests.rewrite(db, round: round) }
        let later = try ReaderStressTests.pageCount(db)
        let report = try db.check()
        print("[readerStress] after a 40-commit snapshot ended: \(settled) pages, 300 commits later \(later) pages (\(report.freePages) free, \(report.treePages) in trees)")
        #expect(later == settled, "the file grew by \(later - settled) pages in 300 commits with \(report.freePages) free pages to reuse")
        #expect(report.isClean)
    }

    @Test func longLivedReaderIsReportedAndItsSpaceComesBackWhenItLeaves() throws {
        let reported = ReportedReaders()
        let (dir, db) = try unsyncedStore { options in
            options.longLivedReaderLimit = 0.2
            options.onLongLivedReaders = { readers in reported.add(readers) }
        }
        try ReaderStressTests.rewrite(db, round: 0)
        let holder = try ChildProcess(["pin-until", dir.path])
        #expect(holder.waitFor("pinned") == "pinned 1")
        // While it holds generation 1, nothing freed since can be reused: the file grows.
        let start = try ReaderStressTests.pageCount(db)
        let deadline = Date().addingTimeInterval(1.5)
        var round = 1
        while Date() < deadline {
            try ReaderStressTests.rewrite(db, round: round)
            round += 1
            usleep(2000)
        }
        let pinned = try ReaderStressTests.pageCount(db)
        #expect(pinned > start + 50, "the file did not grow under a pinned snapshot: \(start) -> \(pinned)")
        #expect(reported.pids.contains(holder.pid), "the long-lived reader was not reported")
        let slow = try db.longLivedReaders(olderThan: 0.2)
        #expect(slow.contains { $0.pid == holder.pid && $0.snapshot == 1 && $0.pinnedPages > 0 && $0.isAlive })
        // It leaves (ends its transaction, stays alive): the pages come back and growth stops.
        holder.send("end")
        #expect(holder.waitFor("released") == "released")
        for _ in 0..<5 { try ReaderStressTests.rewrite(db, round: round); round += 1 }
        let settled = try ReaderStressTests.pageCount(db)
        for _ in 0..<100 { try ReaderStressTests.rewrite(db, round: round); round += 1 }
        let later = try ReaderStressTests.pageCount(db)
        #expect(later == settled, "the file kept growing after the long-lived reader left: \(settled) -> \(later)")
        #expect(try db.longLivedReaders(olderThan: 0.2).isEmpty)
        #expect(try db.check().isClean)
        holder.killHard()
        print("[readerStress] long-lived reader reported (pinned \(slow.first?.pinnedPages ?? 0) pages, file \(start) -> \(pinned) pages); after it left the file settled at \(later) pages over 100 commits")
    }
}
