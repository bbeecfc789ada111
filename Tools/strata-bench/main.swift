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
// "strata+checksums": the same store with `verifyChecksums` on, to price checking every page read.
let typedEngines: [(name: String, open: BookStoreOpener)] = [
    ("strata", { try StrataBookStore(path: $0, durability: $1) }),
    ("strata+checksums", { try StrataBookStore(path: $0, durability: $1, verifyChecksums: true) }),
]
if EntityWorkload.runIfAsked(arguments: &arguments, engines: [("strata", { try StrataEntityBenchStore(path: $0, durability: $1) })]) { exit(0) }
if TypedWorkload.runIfAsked(arguments: &arguments, engines: typedEngines) { exit(0) }
BenchMain.run(engines: [StrataStore.self], arguments: arguments)
