import Foundation
import Synchronization
import Testing
@testable import StrataCore

/// Group commit (`Database.write` from many threads): every acknowledged write is durable, no
/// failed request leaves a trace, and concurrent requests really share commits.
@Suite(.serialized) struct GroupCommitTests {
    private struct IntendedFailure: Error {}

    /// 64 threads of this process, one write in four failing (some after writing a page), at full
    /// durability: the failed requests are rolled back alone.
    @Test func concurrentWritersWithFailures() throws {
        let seed = testSeed("concurrentWritersWithFailures")
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in _ = try tx.createTree("g") }
        let startGeneration = db.generation
        let threads = 64, perThread = 40
        let outcomes = Mutex<(acknowledged: [String], failed: [String], unexpected: [String])>(([], [], []))
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                var random = SeededGenerator(seed: seed &+ UInt64(thread))
                for i in 0..<perThread {
                    let fails = Int.random(in: 0..<4, using: &random) == 0
                    let key = "\(thread)-\(i)"
                    do {
                        let replaced = try db.write { tx in
                            let tree = try tx.tree("g")
                            let replaced = try tx.put(key, key, in: tree)
                            if fails { throw IntendedFailure() }
                            return replaced
                        }
                        outcomes.withLock { $0.acknowledged.append(key) }
                        if replaced { outcomes.withLock { $0.unexpected.append("\(key) replaced") } }
                    } catch is IntendedFailure {
                        outcomes.withLock { $0.failed.append(key) }
                    } catch {
                        outcomes.withLock { $0.unexpected.append("\(key): \(error)") }
                    }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let result = outcomes.withLock { $0 }
        #expect(result.unexpected.isEmpty, "\(result.unexpected.prefix(5))")
        #expect(result.acknowledged.count + result.failed.count == threads * perThread)
        let commits = db.generation - startGeneration
        let statistics = db.groupCommitStatistics
        print("[concurrentWritersWithFailures] \(result.acknowledged.count) acknowledged, \(result.failed.count) failed, \(commits) commits, \(statistics.commits) grouped commits carrying \(statistics.requests) requests")
        // Requests shared commits: fewer commits than acknowledged writes.
        #expect(commits < UInt64(result.acknowledged.count))
        #expect(statistics.commits > 0)
        db.close()
        try verify(dir.path, acknowledged: result.acknowledged, failed: result.failed, exact: true)
    }

    /// Requests queued behind a transaction held open run as one group: a body that throws and
    /// one that calls `abort()` are rolled back alone (the latter returns normally, as an
    /// ungrouped write would), the others commit together.
    @Test func groupedBodiesThatThrowOrAbortRollBackAlone() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        try db.write { tx in _ = try tx.createTree("g") }
        let holder = try db.beginWrite() // the writer lock: requests queue behind it
        let results = Mutex<[Int: String]>([:])
        let group = DispatchGroup()
        for index in 0..<8 {
            group.enter()
            Thread {
                let outcome: String
                do {
                    outcome = try db.write { tx in
                        try tx.put("k\(index)", "v", in: try tx.tree("g"))
                        if index == 3 { throw IntendedFailure() }
                        if index == 5 {
                            tx.abort()
                            return "aborted"
                        }
                        return "ok"
                    }
                } catch is IntendedFailure {
                    outcome = "failed"
                } catch {
                    outcome = "\(error)"
                }
                results.withLock { $0[index] = outcome }
                group.leave()
            }.start()
        }
        usleep(300_000) // let every request queue (one leads and waits for the lock)
        holder.abort()
        group.wait()
        let outcomes = results.withLock { $0 }
        #expect(outcomes[3] == "failed")
        #expect(outcomes[5] == "aborted")
        #expect(outcomes.filter { $0.value == "ok" }.count == 6, "\(outcomes)")
        #expect(db.groupCommitStatistics.commits >= 1)
        try db.read { tx in
            let tree = try tx.tree("g")
            for index in 0..<8 {
                #expect((try tx.get("k\(index)", in: tree) != nil) == (index != 3 && index != 5), "k\(index)")
            }
        }
    }

    /// A body that calls `db.write` again is refused, also when it runs on the group's leader.
    @Test func writeInsideAWriteBodyIsMisuse() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        #expect(throws: StrataError.self) {
            try db.write { _ in try db.write { _ in } }
        }
        try db.write { tx in try tx.put("a", "1", in: try tx.openOrCreateTree("t")) }
    }

    /// A child process runs 64 writer threads and is SIGKILLed at random moments: after each kill
    /// every write it acknowledged is present, no failed request's key is, the store is clean, and
    /// the commits were fewer than the writes (grouping happened).
    @Test func killedGroupWritersLoseNothingAcknowledged() throws {
        let seed = testSeed("killedGroupWriters")
        var random = SeededGenerator(seed: seed)
        let dir = TemporaryDirectory()
        var acknowledged: [String] = []
        for round in 0..<4 {
            let child = try ChildProcess(["group-writers", dir.path, String(round)])
            #expect(child.waitFor("ready", timeout: 30) == "ready")
            usleep(UInt32.random(in: 50_000...400_000, using: &random))
            child.killHard()
            let lines = child.allLines
            #expect(!lines.contains { $0.hasPrefix("error") }, "\(lines.filter { $0.hasPrefix("error") }.prefix(3))")
            acknowledged += lines.compactMap { $0.hasPrefix("ack ") ? String($0.dropFirst(4)) : nil }
            try verify(dir.path, acknowledged: acknowledged, failed: [], exact: false)
        }
        let db = try Database(path: dir.path, mode: .readOnly)
        let present = try db.read { tx in try tx.count(tx.tree("g")) }
        print("[killedGroupWriters] \(acknowledged.count) acknowledged over 4 kills, \(present) present, \(db.generation) commits")
        #expect(acknowledged.count > 100)
        #expect(db.generation < UInt64(present), "no grouping: \(db.generation) commits for \(present) writes")
    }

    /// The store at `path` is clean, holds every acknowledged key, no failed one and no `x-` key
    /// (the child's failing requests); with `exact`, nothing else either.
    private func verify(_ path: String, acknowledged: [String], failed: [String], exact: Bool) throws {
        let db = try Database(path: path, mode: .readOnly)
        let report = try db.check()
        #expect(report.isClean, "\(report.problems)")
        try db.read { tx in
            let tree = try tx.tree("g")
            var present = Set<String>()
            try tx.scan(tree) { key, value in
                let text = String(decoding: key.bytes, as: UTF8.self)
                #expect(value.bytes == key.bytes)
                present.insert(text)
                return true
            }
            let missing = acknowledged.filter { !present.contains($0) }
            #expect(missing.isEmpty, "acknowledged but missing: \(missing.prefix(5))")
            let leaked = failed.filter { present.contains($0) } + present.filter { $0.hasPrefix("x-") }
            #expect(leaked.isEmpty, "failed but present: \(leaked.prefix(5))")
            if exact { #expect(present.count == acknowledged.count) }
        }
    }
}
