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
if arguments == ["--mdbx-version"] {
    // For bench-compare's table header; fails (status 1) when libmdbx cannot be loaded.
    switch MDBXLibrary.loaded {
    case .success(let library): print(library.version); exit(0)
    case .failure(let error):
        let line = Array("peer-bench: \(error)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(1)
    }
}
// The entity workloads (`entities`) on SQLite only: LMDB has no entity layer to compare.
if EntityWorkload.runIfAsked(arguments: &arguments, engines: [("sqlite", { SQLiteEntityStore(path: $0, durability: $1) })]) { exit(0) }
if TypedWorkload.runIfAsked(arguments: &arguments, engines: typedEngines) { exit(0) }
// mdbx runs only when asked for (`--engine mdbx`): `all` stays LMDB and SQLite, which need no download.
let engines: [any KVStore.Type] = arguments.contains("mdbx") ? [MDBXStore.self] : [LMDBStore.self, SQLiteStore.self]
BenchMain.run(engines: engines, arguments: arguments)
