// groupcommit: T threads of one process (T = each of `--writers`, default 1,4,16,64), each
// committing one durable put per transaction for `--duration` seconds, on a fresh store per T.
// Thread t writes key(t * 100_000_000 + i) / value(i). A thread also does `--groupcommit-reads`
// point reads (a whole read transaction each, random keys it wrote) between two writes, and
// `--groupcommit-nosync` makes the commits non-durable: together they measure the hand-off
// between writers without the flush. JSON per T: `writers`, `ops_per_sec` (acknowledged commits
// per second, all threads), `p50_us`/`p99_us` (per write request, begin to durable), `commits`
// (commits that reached the file: fewer than the requests when the engine groups them).
import Glibc

/// One thread's connection to a store for `groupcommit`: the engine's own way for many threads of
/// one process to write (a shared environment, a connection per thread, ...).
public protocol ThreadClient: AnyObject {
    /// One write transaction holding one put, committed (durably if the store was opened so).
    func commitOne(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer)
    /// One read transaction around one get; true if the key was found.
    func readOne(_ key: UnsafeRawBufferPointer) -> Bool
    func close()
}

/// A store that many threads of this process can write at once.
public protocol ConcurrentKVStore: KVStore {
    /// A client for the calling thread (used on that thread only).
    func threadClient() -> any ThreadClient
    /// Commits that reached the file so far, if the engine can tell (else: one per request).
    func commitCount() -> UInt64?
}

/// Moves a non-Sendable value to the thread that alone uses it from then on.
final class Handover<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

extension Runner {
    mutating func groupcommit() {
        guard let concurrent = S.self as? any ConcurrentKVStore.Type else {
            Sys.err("\(Sys.program): \(engine.rawValue): groupcommit skipped (no concurrent writers)")
            return
        }
        for writers in o.writers { record(groupcommit(writers: writers, concurrent)) }
    }

    private func groupcommit<C: ConcurrentKVStore>(writers: Int, _: C.Type) -> BenchResult {
        let dir = storeDir("groupcommit-\(writers)")
        Sys.freshDirectory(dir)
        let durable = !o.groupCommitNoSync
        let store = C(directory: dir, options: OpenOptions(create: true, durable: durable))
        // One write creates the table/tree, outside the clock.
        store.beginWrite()
        let scratch = Scratch()
        scratch.set(Int.max / 2)
        store.put(scratch.keyBytes, scratch.valueBytes)
        store.commitWrite()
        let commitsBefore = store.commitCount()
        let clients = (0..<writers).map { _ in Handover(store.threadClient()) }
        let reads = o.groupCommitReads
        let limit = UInt64(o.duration * 1e9)
        let latencies = Handover(UnsafeMutableBufferPointer<[UInt64]>.allocate(capacity: writers))
        latencies.value.initialize(repeating: [])
        let start = Sys.monoNanos()
        var threads: [pthread_t] = []
        for t in 0..<writers {
            let work = Handover({
                let client = clients[t].value
                let scratch = Scratch()
                var rng = SplitMix64(seed: UInt64(t) &+ 1)
                var own: [UInt64] = []
                own.reserveCapacity(1 << 16)
                var i = 0
                while Sys.monoNanos() &- start < limit {
                    for _ in 0..<(i > 0 ? reads : 0) {
                        BenchData.writeKey(t * 100_000_000 + Int(rng.next() % UInt64(i)), into: scratch.key)
                        if !client.readOne(scratch.keyBytes) { Sys.fatal("groupcommit: a written key is missing") }
                    }
                    scratch.set(t * 100_000_000 + i)
                    let begin = Sys.monoNanos()
                    client.commitOne(scratch.keyBytes, scratch.valueBytes)
                    own.append(Sys.monoNanos() &- begin)
                    i += 1
                }
                latencies.value[t] = own
            } as () -> Void)
            var thread = pthread_t()
            let context = Unmanaged.passRetained(work).toOpaque()
            let rc = pthread_create(&thread, nil, { context in
                let work = Unmanaged<Handover<() -> Void>>.fromOpaque(context!).takeRetainedValue()
                work.value()
                return nil
            }, context)
            if rc != 0 { Sys.fatal("groupcommit: pthread_create: \(rc)") }
            threads.append(thread)
        }
        for thread in threads { pthread_join(thread, nil) }
        let seconds = Sys.seconds(since: start)
        var all = latencies.value.flatMap { $0 }
        latencies.value.deallocate()
        all.sort()
        let commits = store.commitCount().flatMap { after in commitsBefore.map { after - $0 } } ?? UInt64(all.count)
        for client in clients { client.value.close() }
        store.close()
        Sys.removeTree(dir)
        func percentile(_ p: Double) -> Double {
            all.isEmpty ? 0 : Double(all[min(all.count - 1, Int(Double(all.count) * p))]) / 1000
        }
        return result("groupcommit", ops: all.count, seconds: seconds, [
            ("writers", .int(writers)),
            ("p50_us", .double(percentile(0.5))),
            ("p99_us", .double(percentile(0.99))),
            ("commits", .int(Int(commits))),
            ("durable", .int(durable ? 1 : 0)),
            ("reads_per_write", .int(reads)),
        ])
    }
}
