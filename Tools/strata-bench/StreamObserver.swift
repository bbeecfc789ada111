// notify with `--notify-schedule stream`: the observer process iterates `Database.changes()`, the
// async change stream most programs use, instead of blocking a thread in a `CommitWaiter`. Each
// event crosses from the process's poller thread to a task on the cooperative pool, which is
// part of what this measures. It speaks the protocol of StrataBenchKit's notify-observer:
// "ready", then "idle <cpu %>", then "result <events> <p50> <p99> <max> <cpu %> <spurious>".
import Foundation
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

    /// The (sequence, stamp) the writer last put: the notify store holds one key.
    static func readStamp(_ database: Database) throws -> (UInt64, UInt64)? {
        try database.read { transaction in
            let cursor = try transaction.cursor(try transaction.tree(StrataStore.treeName))
            guard try cursor.first() else { return nil }
            let value = try cursor.value()
            return value.withUnsafeBytes { bytes in
                guard bytes.count >= 16 else { return nil }
                return (UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            }
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

        var latencies: [UInt64] = []
        latencies.reserveCapacity(commits)
        cpuStart = cpuSeconds()
        wallStart = monotonicNanoseconds()
        var seen = UInt64.max
        let last = UInt64(commits - 1)
        for await _ in events {
            guard let (sequence, stamp) = try readStamp(database), sequence != UInt64.max else { continue }
            guard seen == UInt64.max || sequence > seen else { continue }
            latencies.append(monotonicNanoseconds() &- stamp)
            seen = sequence
            if sequence >= last { break }
        }
        let wall = Double(monotonicNanoseconds() - wallStart) / 1e9
        let cpu = wall > 0 ? (cpuSeconds() - cpuStart) / wall * 100 : 0
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let rank = Int((p * Double(latencies.count)).rounded(.up))
            return Double(latencies[min(latencies.count - 1, max(0, rank - 1))]) / 1000
        }
        send("result \(latencies.count) \(percentile(0.5)) \(percentile(0.99)) \(Double(latencies.last ?? 0) / 1000) \(cpu) 0")
    }
}
