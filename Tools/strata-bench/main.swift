// strata-bench: the shared benchmark workloads (StrataBenchKit) on Strata. The same workloads run
// on LMDB and SQLite through Tools/PeerBench; Tools/bench-compare.sh runs all three.
import StrataBenchKit

BenchMain.run(engines: [StrataStore.self])
