// notify: commit-to-observer latency across processes, on a fresh store.
//
// Writer (this process): one transaction per commit putting notifyKey -> 128 bytes, no sync:
// the sequence number, then the CLOCK_MONOTONIC ns stamps (taken before each transaction
// begins) of this commit and the 14 before it, little-endian u64s. The history lets an observer
// that sees several commits at once charge each one its own latency.
// Observer (child): first waits `--notify-idle` seconds with no commits to measure idle CPU,
// then watches the engine's commit token (KVStore.commitToken); on each change it reads the
// value and records now - stamp.
//
// The run has three parts:
// 1. Wake-up: one commit after the idle phase; the writer waits until the observer has seen it.
//    Its latency (`first_after_idle_us`) is what an observer that backed off to its idle ceiling
//    pays for the first commit of a burst.
// 2. Warm-up: `notifyWarmupCommits` commits on the 1 ms tick, not measured (a poller learns the
//    writer's pace here).
// 3. Measured: `--notify-commits` commits on the 1 ms tick. Latencies are per commit: a commit
//    seen only through a later one (`coalesced`) counts from its own stamp to that event.
// `events` counts changes that revealed a new sequence number; a token change whose read
// shows nothing new yet is re-read on the next poll and counted once in `spurious_wakeups`.

let notifyKeyIndex = 0
let notifyPollTimeoutNanos: UInt64 = 10_000_000_000
/// Commits between the wake-up commit and the measured ones.
public let notifyWarmupCommits = 100
/// Stamps each notify value carries (this commit's and the ones before it): 128-byte values.
public let notifyStampHistory = 15

extension Runner {
    mutating func notify() {
        let dir = storeDir("notify")
        Sys.freshDirectory(dir)
        let store = S(directory: dir, options: OpenOptions(create: true, durable: false))
        let scratch = Scratch()
        BenchData.writeKey(notifyKeyIndex, into: scratch.key)
        var history = [UInt64](repeating: 0, count: notifyStampHistory)
        func put(seq: UInt64, stamp: UInt64) {
            history.removeLast()
            history.insert(stamp, at: 0)
            let v = UnsafeMutableRawPointer(scratch.value)
            v.storeBytes(of: seq.littleEndian, toByteOffset: 0, as: UInt64.self)
            for (index, stamp) in history.enumerated() {
                v.storeBytes(of: stamp.littleEndian, toByteOffset: 8 * (index + 1), as: UInt64.self)
            }
            store.beginWrite()
            store.put(scratch.keyBytes, UnsafeRawBufferPointer(start: v, count: 8 * (notifyStampHistory + 1)))
            store.commitWrite()
        }
        put(seq: UInt64.max, stamp: 0)  // the key exists before the observer starts

        let commits = o.notifyCommits
        let observer = ChildProcess(arguments: [
            // `stream` observes through an engine's async change stream (a role of Strata's own).
            "--role", o.notifySchedule == "stream" ? "notify-stream-observer" : "notify-observer",
            "--engine", engine.rawValue, "--store", dir,
            "--notify-commits", String(commits), "--notify-idle", String(o.notifyIdle),
            "--notify-schedule", o.notifySchedule,
        ])
        guard observer.expectLine("ready") == "ready" else { Sys.fatal("notify: bad observer start") }
        let idle = observer.expectLine("idle").split(separator: " ")
        guard idle.count == 2, idle[0] == "idle", let idleCPU = Double(idle[1]) else {
            Sys.fatal("notify: bad idle report")
        }
        put(seq: 0, stamp: Sys.monoNanos())
        let first = observer.expectLine("first").split(separator: " ")
        guard first.count == 2, first[0] == "first", let firstAfterIdle = Double(first[1]) else {
            Sys.fatal("notify: bad first-commit report")
        }

        // The latency the observer reports runs from the stamp (taken before the transaction
        // begins) to the event, so it includes the writer's own commit; that part is timed here.
        var commitDurations: [UInt64] = []
        commitDurations.reserveCapacity(commits)
        let tick: UInt64 = 1_000_000
        let start = Sys.monoNanos()
        var next = start
        var measuredStart = start
        for seq in 1...(notifyWarmupCommits + commits) {
            next += tick
            let now = Sys.monoNanos()
            if next <= now { next = now + tick - (now - start) % tick }  // fell behind: next tick
            Sys.sleep(untilMonoNanos: next)
            let stamp = Sys.monoNanos()
            if seq == notifyWarmupCommits + 1 { measuredStart = stamp }
            put(seq: UInt64(seq), stamp: stamp)
            if seq > notifyWarmupCommits { commitDurations.append(Sys.monoNanos() &- stamp) }
        }
        commitDurations.sort()
        let seconds = Sys.seconds(since: measuredStart)

        let r = observer.expectLine("result").split(separator: " ")
        let status = observer.wait()
        store.close()
        Sys.removeTree(dir)
        guard status == 0, r.count == 9, r[0] == "result", let measured = Int(r[1]),
              let p50 = Double(r[2]), let p99 = Double(r[3]), let maxUs = Double(r[4]),
              let cpu = Double(r[5]), let spurious = Int(r[6]), let coalesced = Int(r[7]),
              let unmeasured = Int(r[8]) else {
            Sys.fatal("notify: bad observer result (status \(status))")
        }
        record(result("notify", ops: commits, seconds: seconds, [
            ("commits", .int(commits)),
            ("events", .int(commits - coalesced)),
            ("latencies", .int(measured)),
            ("coalesced", .int(coalesced)),
            ("unmeasured", .int(unmeasured)),
            ("spurious_wakeups", .int(spurious)),
            ("p50_us", .double(p50)),
            ("p99_us", .double(p99)),
            ("max_us", .double(maxUs)),
            ("first_after_idle_us", .double(firstAfterIdle)),
            ("writer_commit_p50_us", .double(Double(commitDurations[commitDurations.count / 2]) / 1000)),
            ("writer_commit_p99_us", .double(Double(commitDurations[commitDurations.count * 99 / 100]) / 1000)),
            ("cpu_percent", .double(cpu)),
            ("idle_cpu_percent", .double(idleCPU)),
            ("idle_seconds", .double(o.notifyIdle)),
            ("schedule", .string(o.notifySchedule)),
        ]))
    }
}

extension ChildRoles {
    /// `--role notify-observer --store DIR --notify-commits N --notify-idle S`
    static func notifyObserver(_ o: Options) {
        guard let dir = o.store else { Sys.fatal("notify-observer: --store is required") }
        let link = ParentLink()
        let store = S(directory: dir, options: OpenOptions(readOnly: true, notifySchedule: o.notifySchedule))
        let scratch = Scratch()
        BenchData.writeKey(notifyKeyIndex, into: scratch.key)
        let lastSeq = UInt64(notifyWarmupCommits + o.notifyCommits)
        let tally = NotifyTally(warmup: UInt64(notifyWarmupCommits), commits: o.notifyCommits)
        var last = store.commitToken()
        link.send("ready")

        // Idle phase: the same polling loop, nobody commits.
        var cpu0 = Sys.cpuSeconds()
        var wall0 = Sys.monoNanos()
        let idleLimit = UInt64(o.notifyIdle * 1e9)
        var changes = 0
        while Sys.monoNanos() &- wall0 < idleLimit {
            let remaining = Double(idleLimit - (Sys.monoNanos() &- wall0)) / 1e9
            if let t = store.waitForCommit(after: last, timeout: remaining) { last = t; changes += 1 }
        }
        let idleWall = Sys.seconds(since: wall0)
        let idleCPU = idleWall > 0 ? (Sys.cpuSeconds() - cpu0) / idleWall * 100 : 0
        if changes > 0 { Sys.err("notify-observer: \(changes) commits seen while idle") }

        // Active phase.
        cpu0 = Sys.cpuSeconds()
        wall0 = Sys.monoNanos()
        link.send("idle \(idleCPU)")
        var lastEvent = wall0
        var polls: UInt = 0
        var seenSeq = UInt64.max
        var spurious = 0
        var spuriousToken = last
        while true {
            if let t = store.waitForCommit(after: last, timeout: 0.05) {
                let (seq, stamps) = store.readOnce(scratch.keyBytes) { v -> (UInt64, [UInt64]) in
                    guard let v else { return (UInt64.max, []) }
                    return NotifyTally.decode(v)
                }
                if seq != UInt64.max && (seenSeq == UInt64.max || seq > seenSeq) {
                    let now = Sys.monoNanos()
                    last = t
                    lastEvent = now
                    seenSeq = seq
                    if seq == 0 { link.send("first \(Double(now &- stamps[0]) / 1000)") }
                    tally.record(sequence: seq, seenAt: now, stamps: stamps)
                    if seq >= lastSeq { break }
                } else if t != spuriousToken {
                    // The token moved but the read shows no new commit yet: LMDB updates the
                    // meta page (me_last_txnid) just before the reader-visible txnid, and SQLite
                    // bumps data_version when the WAL is reset. Keep `last` so the next poll
                    // reads again; count each such token once.
                    spuriousToken = t
                    spurious += 1
                }
            }
            polls &+= 1
            if Sys.monoNanos() &- lastEvent > notifyPollTimeoutNanos {
                Sys.err("notify-observer: no commit for 10 s, giving up")
                break
            }
        }
        let wall = Sys.seconds(since: wall0)
        let cpu = wall > 0 ? (Sys.cpuSeconds() - cpu0) / wall * 100 : 0
        store.close()

        link.send(tally.resultLine(cpuPercent: cpu, spurious: spurious))
    }
}

/// The observer's side of the measured part: the latency of every measured commit (a commit
/// seen only through a later one counts from its own stamp) and how many were coalesced. Both
/// observers (the waiter loop here and strata-bench's stream observer) report through it, so
/// their result lines cannot drift apart.
public final class NotifyTally {
    let warmup: UInt64
    private var latencies: [UInt64] = []
    private var lastSeen: UInt64
    private(set) var coalesced = 0
    /// Coalesced commits older than the value's stamp history: no latency known, reported apart.
    private(set) var unmeasured = 0

    public init(warmup: UInt64, commits: Int) {
        self.warmup = warmup
        lastSeen = warmup
        latencies.reserveCapacity(commits)
    }

    /// The sequence number and the stamps (newest first) of a notify value; sequence
    /// `UInt64.max` for a value too short to hold them.
    public static func decode(_ value: UnsafeRawBufferPointer) -> (UInt64, [UInt64]) {
        guard value.count >= 16 else { return (UInt64.max, []) }
        let sequence = UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
        let stamps = (1..<(value.count / 8)).map {
            UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 8 * $0, as: UInt64.self))
        }
        return (sequence, stamps)
    }

    /// An event at `seenAt` that revealed commit `sequence` (sequences only grow); `stamps` are
    /// the value's stamps, newest (this commit's) first.
    public func record(sequence: UInt64, seenAt: UInt64, stamps: [UInt64]) {
        guard sequence > lastSeen else { return }
        coalesced += Int(sequence - lastSeen - 1)
        for commit in (lastSeen + 1)...sequence {
            let age = Int(sequence - commit)
            if age < stamps.count, stamps[age] != 0 {
                latencies.append(seenAt &- stamps[age])
            } else {
                unmeasured += 1
            }
        }
        lastSeen = sequence
    }

    /// "result <latencies> <p50 us> <p99 us> <max us> <cpu %> <spurious> <coalesced> <unmeasured>"
    public func resultLine(cpuPercent: Double, spurious: Int) -> String {
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let rank = Int((p * Double(latencies.count)).rounded(.up))  // nearest-rank
            return Double(latencies[min(latencies.count - 1, max(0, rank - 1))]) / 1000
        }
        let maxUs = Double(latencies.last ?? 0) / 1000
        return "result \(latencies.count) \(percentile(0.50)) \(percentile(0.99)) \(maxUs) \(cpuPercent) \(spurious) \(coalesced) \(unmeasured)"
    }
}
