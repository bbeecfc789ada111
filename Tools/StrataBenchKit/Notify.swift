// notify: commit-to-observer latency across processes, on a fresh store.
//
// Writer (this process): every 1 ms tick, one transaction putting notifyKey -> 16 bytes
// (sequence number, CLOCK_MONOTONIC ns stamp, little-endian), no sync.
// Observer (child): first spins `--notify-idle` seconds with no commits to measure idle
// CPU, then busy-polls the engine's commit token (KVStore.commitToken); on each change
// reads the value and records now - stamp.
// `events` counts changes that revealed a new sequence number; a token change whose read
// shows nothing new yet is re-read on the next poll and counted once in `spurious_wakeups`.

let notifyKeyIndex = 0
let notifyPollTimeoutNanos: UInt64 = 10_000_000_000

extension Runner {
    mutating func notify() {
        let dir = storeDir("notify")
        Sys.freshDirectory(dir)
        let store = S(directory: dir, options: OpenOptions(create: true, durable: false))
        let scratch = Scratch()
        BenchData.writeKey(notifyKeyIndex, into: scratch.key)
        func put(seq: UInt64, stamp: UInt64) {
            let v = UnsafeMutableRawPointer(scratch.value)
            v.storeBytes(of: seq.littleEndian, toByteOffset: 0, as: UInt64.self)
            v.storeBytes(of: stamp.littleEndian, toByteOffset: 8, as: UInt64.self)
            store.beginWrite()
            store.put(scratch.keyBytes, UnsafeRawBufferPointer(start: v, count: 16))
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

        // The latency the observer reports runs from the stamp (taken before the transaction
        // begins) to the event, so it includes the writer's own commit; that part is timed here.
        var commitDurations: [UInt64] = []
        commitDurations.reserveCapacity(commits)
        let tick: UInt64 = 1_000_000
        let start = Sys.monoNanos()
        var next = start
        for seq in 0..<commits {
            next += tick
            let now = Sys.monoNanos()
            if next <= now { next = now + tick - (now - start) % tick }  // fell behind: next tick
            Sys.sleep(untilMonoNanos: next)
            let stamp = Sys.monoNanos()
            put(seq: UInt64(seq), stamp: stamp)
            commitDurations.append(Sys.monoNanos() &- stamp)
        }
        commitDurations.sort()
        let seconds = Sys.seconds(since: start)

        let r = observer.expectLine("result").split(separator: " ")
        let status = observer.wait()
        store.close()
        Sys.removeTree(dir)
        guard status == 0, r.count == 7, r[0] == "result", let events = Int(r[1]),
              let p50 = Double(r[2]), let p99 = Double(r[3]), let maxUs = Double(r[4]),
              let cpu = Double(r[5]), let spurious = Int(r[6]) else {
            Sys.fatal("notify: bad observer result (status \(status))")
        }
        record(result("notify", ops: commits, seconds: seconds, [
            ("commits", .int(commits)),
            ("events", .int(events)),
            ("spurious_wakeups", .int(spurious)),
            ("p50_us", .double(p50)),
            ("p99_us", .double(p99)),
            ("max_us", .double(maxUs)),
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
        let lastSeq = UInt64(o.notifyCommits - 1)
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
        var latencies: [UInt64] = []
        latencies.reserveCapacity(o.notifyCommits)
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
                let (seq, stamp) = store.readOnce(scratch.keyBytes) { v -> (UInt64, UInt64) in
                    guard let v, v.count >= 16 else { return (UInt64.max, 0) }
                    return (UInt64(littleEndian: v.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                            UInt64(littleEndian: v.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
                }
                if seq != UInt64.max && (seenSeq == UInt64.max || seq > seenSeq) {
                    let now = Sys.monoNanos()
                    last = t
                    lastEvent = now
                    seenSeq = seq
                    latencies.append(now &- stamp)
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

        latencies.sort()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let rank = Int((p * Double(latencies.count)).rounded(.up))  // nearest-rank
            return Double(latencies[min(latencies.count - 1, max(0, rank - 1))]) / 1000
        }
        let maxUs = Double(latencies.last ?? 0) / 1000
        link.send("result \(latencies.count) \(percentile(0.50)) \(percentile(0.99)) \(maxUs) \(cpu) \(spurious)")
    }
}
