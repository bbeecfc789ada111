// The single-process workloads: fillseq, fillrandom, readrandom, readseq, synccommit, smallcommit.
// `Runner` is generic over the engine so every engine runs the very same code.

/// Keeps a value alive so the work that produced it is not optimized away.
@inline(never) @_optimize(none)
func blackHole(_ x: UInt64) {}

struct Runner<S: KVStore> {
    let o: Options
    /// Base directory; each store is the directory `<base>/<engine>-<name>`.
    let base: String
    private(set) var results: [BenchResult] = []
    /// Whether the fillrandom store exists and holds records 0..<N.
    private var fillrandomReady = false
    /// Keys beyond N added to the fillrandom store by synccommit.
    private var extraKeys = 0

    init(options: Options, base: String) {
        o = options
        self.base = base
    }

    var engine: EngineKind { S.kind }
    var n: Int { o.records }

    func storeDir(_ name: String) -> String { "\(base)/\(S.kind.rawValue)-\(name)" }

    mutating func run(_ workload: String) {
        switch workload {
        case "fillseq": fillseq()
        case "fillrandom": fillrandom()
        case "readrandom": readrandom()
        case "readseq": readseq()
        case "synccommit": synccommit()
        case "smallcommit": smallcommit()
        case "mixed": mixed()
        case "notify": notify()
        case "groupcommit": groupcommit()
        default: Sys.fatal("unknown workload \(workload)")
        }
    }

    mutating func record(_ r: BenchResult) {
        Report.emit(r)
        results.append(r)
    }

    func result(_ workload: String, ops: Int, seconds: Double,
                _ extra: [(String, JSONValue)] = []) -> BenchResult {
        BenchResult(engine: engine, workload: workload, records: n, ops: ops, seconds: seconds, extra: extra)
    }

    // MARK: fills

    /// Creates a fresh store in `dir` and inserts records in `order` (empty = 0..<N),
    /// committing durably every `batch` puts. Returns the elapsed seconds.
    private func fill(_ dir: String, order: [Int]) -> Double {
        Sys.freshDirectory(dir)
        let store = S(directory: dir, options: OpenOptions(create: true, durable: true))
        let scratch = Scratch()
        let batch = o.batch
        let start = Sys.monoNanos()
        var i = 0
        while i < n {
            store.beginWrite()
            let end = min(n, i + batch)
            while i < end {
                scratch.set(order.isEmpty ? i : order[i])
                store.put(scratch.keyBytes, scratch.valueBytes)
                i += 1
            }
            store.commitWrite()
        }
        let seconds = Sys.seconds(since: start)
        store.close()
        return seconds
    }

    mutating func fillseq() {
        let dir = storeDir("fillseq")
        let seconds = fill(dir, order: [])
        let bytes = Sys.treeBytes(dir)
        Sys.removeTree(dir)
        record(result("fillseq", ops: n, seconds: seconds,
                      [("batch", .int(o.batch)), ("store_bytes", .int(bytes))]))
    }

    mutating func fillrandom() {
        let order = BenchData.permutation(n)  // built before the clock starts
        let dir = storeDir("fillrandom")
        let seconds = fill(dir, order: order)
        fillrandomReady = true
        extraKeys = 0
        record(result("fillrandom", ops: n, seconds: seconds,
                      [("batch", .int(o.batch)), ("store_bytes", .int(Sys.treeBytes(dir)))]))
    }

    /// The read, synccommit and mixed workloads run on the fillrandom store; build it
    /// (unreported) when fillrandom was not part of this run.
    mutating func ensureFillrandom() {
        guard !fillrandomReady else { return }
        Sys.err("\(Sys.program): \(engine.rawValue): building the fillrandom store (\(n) records) first")
        _ = fill(storeDir("fillrandom"), order: BenchData.permutation(n))
        fillrandomReady = true
        extraKeys = 0
    }

    // MARK: reads

    mutating func readrandom() {
        ensureFillrandom()
        let store = S(directory: storeDir("fillrandom"), options: OpenOptions())
        let scratch = Scratch()
        var rng = SplitMix64(seed: 7)
        var acc: UInt64 = 0
        let start = Sys.monoNanos()
        store.beginRead()
        for _ in 0..<n {
            BenchData.writeKey(Int(rng.next() % UInt64(n)), into: scratch.key)
            guard let v = store.get(scratch.keyBytes), v.count == BenchData.valueSize else {
                Sys.fatal("readrandom: missing or short value")
            }
            acc &+= UInt64(v[0])
        }
        store.endRead()
        let seconds = Sys.seconds(since: start)
        store.close()
        blackHole(acc)
        record(result("readrandom", ops: n, seconds: seconds))
    }

    mutating func readseq() {
        ensureFillrandom()
        let store = S(directory: storeDir("fillrandom"), options: OpenOptions())
        var acc: UInt64 = 0
        let start = Sys.monoNanos()
        store.beginRead()
        let count = store.scan { k, v in
            acc &+= UInt64(k[k.count - 1]) &+ UInt64(v[0])
        }
        store.endRead()
        let seconds = Sys.seconds(since: start)
        store.close()
        blackHole(acc)
        guard count == n + extraKeys else {
            Sys.fatal("readseq: scanned \(count) records, expected \(n + extraKeys)")
        }
        record(result("readseq", ops: count, seconds: seconds))
    }

    // MARK: synccommit

    mutating func synccommit() {
        ensureFillrandom()
        let store = S(directory: storeDir("fillrandom"), options: OpenOptions(durable: true))
        let scratch = Scratch()
        let commits = o.syncCommits
        let start = Sys.monoNanos()
        for j in 0..<commits {
            scratch.set(n + j)
            store.beginWrite()
            store.put(scratch.keyBytes, scratch.valueBytes)
            store.commitWrite()
        }
        let seconds = Sys.seconds(since: start)
        store.close()
        extraKeys = max(extraKeys, commits)
        record(result("synccommit", ops: commits, seconds: seconds,
                      [("commits", .int(commits))]))
    }

    // MARK: smallcommit

    /// One put per transaction without syncing (LMDB MDB_NOSYNC, SQLite synchronous=OFF): the
    /// CPU and page-cache cost of a commit alone, the writer's share of the notify latency.
    /// Reports the per-commit p50/p99 besides throughput.
    mutating func smallcommit() {
        ensureFillrandom()
        let store = S(directory: storeDir("fillrandom"), options: OpenOptions(durable: false))
        let scratch = Scratch()
        let commits = o.syncCommits * 5
        var durations: [UInt64] = []
        durations.reserveCapacity(commits)
        let start = Sys.monoNanos()
        for j in 0..<commits {
            scratch.set(n + extraKeys + j)
            let began = Sys.monoNanos()
            store.beginWrite()
            store.put(scratch.keyBytes, scratch.valueBytes)
            store.commitWrite()
            durations.append(Sys.monoNanos() &- began)
        }
        let seconds = Sys.seconds(since: start)
        store.close()
        extraKeys += commits
        durations.sort()
        record(result("smallcommit", ops: commits, seconds: seconds, [
            ("commits", .int(commits)),
            ("commit_p50_us", .double(Double(durations[durations.count / 2]) / 1000)),
            ("commit_p99_us", .double(Double(durations[durations.count * 99 / 100]) / 1000)),
        ]))
    }
}
