// notify with `--notify-schedule stream`: the observer process iterates `Database.changes()`, the
// async change stream most programs use, instead of blocking a thread in a `CommitWaiter`. Each
// event crosses from the process's poller thread to a task on the cooperative pool, which is
// part of what this measures. It speaks the protocol of StrataBenchKit's notify-observer:
// "ready", "idle <cpu %>", "first <us>" for the wake-up commit, then the result line of
// `NotifyTally`.
import Foundation
import StrataBenchKit
import StrataCore

enum StreamObserver {
    static let role = "notify-stream-observer"

    static func value(of flag: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    static func send(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// The sequence number and stamps the writer last put: the notify store holds one key.
    static func readStamps(_ database: Database) throws -> (UInt64, [UInt64])? {
        try database.read { transaction in
            let cursor = try transaction.cursor(try transaction.tree(StrataStore.treeName))
            guard try cursor.first() else { return nil }
            return try cursor.value().withUnsafeBytes { NotifyTally.decode($0) }
        }
    }

    static func run(arguments: [String]) async throws {
        guard let directory = value(of: "--store", in: arguments),
              let commits = value(of: "--notify-commits", in: arguments).flatMap(Int.init),
              let idle = value(of: "--notify-idle", in: arguments).flatMap(Double.init) else {
            throw StrataError.misuse("notify-stream-observer needs --store, --notify-commits and --notify-idle")
        }
        let database = try Database(path: directory + "/store.strata", mode: .readOnly)
        defer { database.close() }
        let events = try database.changes()
        send("ready")

        var cpuStart = cpuSeconds()
        var wallStart = monotonicNanoseconds()
        try await Task.sleep(nanoseconds: UInt64(idle * 1e9))
        let idleWall = Double(monotonicNanoseconds() - wallStart) / 1e9
        send("idle \(idleWall > 0 ? (cpuSeconds() - cpuStart) / idleWall * 100 : 0)")

        let tally = NotifyTally(warmup: UInt64(notifyWarmupCommits), commits: commits)
        cpuStart = cpuSeconds()
        wallStart = monotonicNanoseconds()
        var seen = UInt64.max
        let last = UInt64(notifyWarmupCommits + commits)
        for await _ in events {
            guard let (sequence, stamps) = try readStamps(database), sequence != UInt64.max else { continue }
            guard seen == UInt64.max || sequence > seen else { continue }
            let now = monotonicNanoseconds()
            if sequence == 0 { send("first \(Double(now &- stamps[0]) / 1000)") }
            tally.record(sequence: sequence, seenAt: now, stamps: stamps)
            seen = sequence
            if sequence >= last { break }
        }
        let wall = Double(monotonicNanoseconds() - wallStart) / 1e9
        let cpu = wall > 0 ? (cpuSeconds() - cpuStart) / wall * 100 : 0
        send(tally.resultLine(cpuPercent: cpu, spurious: 0))
    }
}
