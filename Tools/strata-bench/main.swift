// strata-bench: Strata's benchmarks. The raw engine workloads are the shared ones
// (StrataBenchKit), which Tools/PeerBench also runs on LMDB and SQLite; Tools/bench-compare.sh
// runs all three. `typed` runs the typed-layer workloads (Book with title and isbn indexes).
// With no workload named, everything runs: typed first, then the raw workloads.
import Foundation
import StrataBenchKit

var arguments = Array(CommandLine.arguments.dropFirst())
if StreamObserver.value(of: "--role", in: arguments) == StreamObserver.role {
    do { try await StreamObserver.run(arguments: arguments) } catch { BenchMain.fatal("\(StreamObserver.role): \(error)") }
    exit(0)
}
let isChildRole = arguments.contains("--role")
let wantsTyped = arguments.contains("typed")
let namesWorkload = arguments.contains { allWorkloads.contains($0) }
if !isChildRole && (wantsTyped || !namesWorkload) {
    var records = 100_000
    if let flag = arguments.firstIndex(of: "--typed-records"), flag + 1 < arguments.count, let value = Int(arguments[flag + 1]) {
        records = value
        arguments.removeSubrange(flag...flag + 1)
    }
    let directory = NSTemporaryDirectory() + "strata-bench-typed-\(getpid())"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var bench = TypedBench(records: records, directory: directory)
    do { try bench.run() } catch { BenchMain.fatal("typed: \(error)") }
    try? FileManager.default.removeItem(atPath: directory)
    arguments.removeAll { $0 == "typed" }
    if wantsTyped && !namesWorkload { exit(0) }
}
BenchMain.run(engines: [StrataStore.self], arguments: arguments)
