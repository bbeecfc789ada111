// The engine-neutral store interface the workloads are written against.
// Each engine (LMDB, SQLite) implements it in its own file; the workload code is shared,
// so both engines run exactly the same sequence of operations.

enum EngineKind: String, CaseIterable {
    case lmdb
    case sqlite
}

/// How a store is opened.
struct OpenOptions {
    /// Create the store (its directory already exists and is empty).
    var create = false
    /// Durable commits (LMDB: default flags, fdatasync per commit; SQLite: synchronous=FULL).
    /// When false: LMDB MDB_NOSYNC, SQLite synchronous=OFF.
    var durable = true
    /// Reader-only handle (child reader / observer processes).
    var readOnly = false
}

protocol KVStore: AnyObject {
    static var kind: EngineKind { get }

    /// Opens the store that lives in `directory` (one directory per store).
    init(directory: String, options: OpenOptions)

    // Write transactions.
    func beginWrite()
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer)
    func commitWrite()

    // One long read transaction with many gets / a full scan.
    func beginRead()
    /// Returns the value for `key`, valid until the next `get` or `endRead`.
    func get(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?
    /// Visits every record in key order inside the current read transaction; returns the count.
    func scan(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Int
    func endRead()

    /// One complete read transaction around a single get (begin, get, end).
    func readOnce<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> R) -> R

    /// A number that changes whenever another process commits
    /// (LMDB: mdb_env_info().me_last_txnid; SQLite: PRAGMA data_version).
    func commitToken() -> UInt64

    func close()
}
