// mixed: one writer (this process) + reader child processes, on the fillrandom store.
//
// Writer: transactions of 100 puts of key(next() % N) / value(i, salt: generation) with
// SplitMix64 seeded `mixedWriterSeed`, generation = 1, 2, ... per transaction, commits
// without sync (OpenOptions.durable = false). Reader r (0-based) uses seed
// `mixedReaderSeedBase + r` and loops { begin read txn; get key(next() % N); end txn }.
// Readers open the store, report "ready", and all start on "go"; each times itself.

let mixedReaders = 2
let mixedBatch = 100
let mixedWriterSeed: UInt64 = 11
let mixedReaderSeedBase: UInt64 = 101

extension Runner {
    mutating func mixed() {
        ensureFillrandom()
        let dir = storeDir("fillrandom")
        let readers = (0..<mixedReaders).map { r in
            ChildProcess(arguments: [
                "--role", "mixed-reader", "--engine", engine.rawValue, "--store", dir,
                "--records", String(n), "--duration", String(o.duration),
                "--seed", String(mixedReaderSeedBase + UInt64(r)),
            ])
        }
        for c in readers where c.expectLine("ready") != "ready" {
            Sys.fatal("mixed: unexpected message from reader \(c.pid)")
        }
        let store = S(directory: dir, options: OpenOptions(durable: false))
        let scratch = Scratch()
        var rng = SplitMix64(seed: mixedWriterSeed)
        let limit = UInt64(o.duration * 1e9)
        for c in readers { c.send("go") }
        let start = Sys.monoNanos()
        var puts = 0
        var generation: UInt64 = 0
        repeat {
            generation += 1
            store.beginWrite()
            for _ in 0..<mixedBatch {
                scratch.set(Int(rng.next() % UInt64(n)), salt: generation)
                store.put(scratch.keyBytes, scratch.valueBytes)
            }
            store.commitWrite()
            puts += mixedBatch
        } while Sys.monoNanos() &- start < limit
        let seconds = Sys.seconds(since: start)
        store.close()

        var each: [Double] = []
        var gets = 0
        for c in readers {
            let parts = c.expectLine("result").split(separator: " ")
            guard parts.count == 3, parts[0] == "result", let count = Int(parts[1]),
                  let secs = Double(parts[2]), secs > 0 else {
                Sys.fatal("mixed: bad result from reader \(c.pid)")
            }
            let status = c.wait()
            if status != 0 { Sys.fatal("mixed: reader \(c.pid) exited with status \(status)") }
            gets += count
            each.append(Double(count) / secs)
        }
        record(result("mixed", ops: puts, seconds: seconds, [
            ("batch", .int(mixedBatch)),
            ("commits", .int(Int(generation))),
            ("readers", .int(mixedReaders)),
            ("reader_gets", .int(gets)),
            ("reader_gets_per_sec", .double(each.reduce(0, +))),
            ("reader_gets_per_sec_each", .doubles(each)),
        ]))
    }
}

enum ChildRoles<S: KVStore> {
    /// `--role mixed-reader --store DIR --records N --duration S --seed X`
    static func mixedReader(_ o: Options) {
        guard let dir = o.store else { Sys.fatal("mixed-reader: --store is required") }
        let link = ParentLink()
        let store = S(directory: dir, options: OpenOptions(readOnly: true))
        let scratch = Scratch()
        var rng = SplitMix64(seed: o.seed)
        let n = UInt64(o.records)
        link.send("ready")
        _ = link.expectLine("go")
        let limit = UInt64(o.duration * 1e9)
        var count = 0
        var acc: UInt64 = 0
        let start = Sys.monoNanos()
        repeat {
            for _ in 0..<64 {
                BenchData.writeKey(Int(rng.next() % n), into: scratch.key)
                let ok = store.readOnce(scratch.keyBytes) { v -> Bool in
                    guard let v, v.count == BenchData.valueSize else { return false }
                    acc &+= UInt64(v[0])
                    return true
                }
                if !ok { Sys.fatal("mixed-reader: missing or short value") }
            }
            count += 64
        } while Sys.monoNanos() &- start < limit
        let seconds = Sys.seconds(since: start)
        store.close()
        blackHole(acc)
        link.send("result \(count) \(seconds)")
    }
}
