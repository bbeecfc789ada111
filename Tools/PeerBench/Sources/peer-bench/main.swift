// peer-bench: the shared benchmark workloads (StrataBenchKit) on LMDB and SQLite.
import StrataBenchKit

BenchMain.run(engines: [LMDBStore.self, SQLiteStore.self])
