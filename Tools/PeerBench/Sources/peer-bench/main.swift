// peer-bench: the shared benchmark workloads (StrataBenchKit) on LMDB and SQLite, including the
// typed workload (`typed`, see StrataBenchKit/TypedBooks.swift).
import Glibc
import StrataBenchKit

var arguments = Array(CommandLine.arguments.dropFirst())
let typedEngines: [(name: String, open: BookStoreOpener)] = [
    ("lmdb", { LMDBBookStore(path: $0, durability: $1) }),
    ("sqlite", { SQLiteBookStore(path: $0, durability: $1, tuning: .tuned) }),
    // The typed workload only: SQLite as GRDB opens it (see SQLiteBooks.swift).
    ("sqlite-defaults", { SQLiteBookStore(path: $0, durability: $1, tuning: .defaults) }),
]
// The entity workloads (`entities`) on SQLite only: LMDB has no entity layer to compare.
if EntityWorkload.runIfAsked(arguments: &arguments, engines: [("sqlite", { SQLiteEntityStore(path: $0, durability: $1) })]) { exit(0) }
if TypedWorkload.runIfAsked(arguments: &arguments, engines: typedEngines) { exit(0) }
BenchMain.run(engines: [LMDBStore.self, SQLiteStore.self], arguments: arguments)
