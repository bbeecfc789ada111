// SQLite engine: `<dir>/kv.db`, table kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID, WAL mode,
// prepared statements reused, INSERT OR REPLACE. Other settings are SQLite's defaults.
import CSQLite
import Glibc
import StrataBenchKit

final class SQLiteStore: KVStore {
    static let kind: EngineKind = "sqlite"

    private var db: OpaquePointer?
    private var insertStmt: OpaquePointer?
    private var selectStmt: OpaquePointer?
    private var scanStmt: OpaquePointer?
    private var beginStmt: OpaquePointer?
    private var commitStmt: OpaquePointer?
    private var versionStmt: OpaquePointer?
    /// For the per-thread connections of groupcommit.
    let path: String
    let durable: Bool

    init(directory: String, options: OpenOptions) {
        path = directory + "/kv.db"
        durable = options.durable
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if options.create { flags |= SQLITE_OPEN_CREATE }
        db = SQLite.open(path, flags: flags)
        SQLite.exec(db, "PRAGMA journal_mode=WAL")
        SQLite.exec(db, options.durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
        if options.create {
            SQLite.exec(db, "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        }
        insertStmt = SQLite.prepare(db, "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)")
        selectStmt = SQLite.prepare(db, "SELECT v FROM kv WHERE k = ?1")
        scanStmt = SQLite.prepare(db, "SELECT k, v FROM kv ORDER BY k")
        beginStmt = SQLite.prepare(db, "BEGIN")
        commitStmt = SQLite.prepare(db, "COMMIT")
        versionStmt = SQLite.prepare(db, "PRAGMA data_version")
    }

    deinit { close() }

    func beginWrite() { SQLite.stepDone(db, beginStmt, "BEGIN") }

    @inline(__always)
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        // Destructor nil == SQLITE_STATIC: the buffers outlive the step below.
        sqlite3_bind_blob(insertStmt, 1, key.baseAddress, Int32(key.count), nil)
        sqlite3_bind_blob(insertStmt, 2, value.baseAddress, Int32(value.count), nil)
        SQLite.stepDone(db, insertStmt, "INSERT")
    }

    func commitWrite() { SQLite.stepDone(db, commitStmt, "COMMIT") }

    func beginRead() { SQLite.stepDone(db, beginStmt, "BEGIN") }

    /// Binds and steps the select statement; the caller resets it.
    @inline(__always)
    private func lookup(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        sqlite3_bind_blob(selectStmt, 1, key.baseAddress, Int32(key.count), nil)
        let rc = sqlite3_step(selectStmt)
        if rc == SQLITE_ROW {
            let n = Int(sqlite3_column_bytes(selectStmt, 0))
            return UnsafeRawBufferPointer(start: sqlite3_column_blob(selectStmt, 0), count: n)
        }
        if rc != SQLITE_DONE { SQLite.failure(db, "SELECT") }
        return nil
    }

    @inline(__always)
    func get(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        sqlite3_reset(selectStmt)  // releases the previous row; the explicit transaction stays open
        return lookup(key)
    }

    func scan(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Int {
        defer { sqlite3_reset(scanStmt) }
        var count = 0
        var rc = sqlite3_step(scanStmt)
        while rc == SQLITE_ROW {
            let k = UnsafeRawBufferPointer(start: sqlite3_column_blob(scanStmt, 0),
                                           count: Int(sqlite3_column_bytes(scanStmt, 0)))
            let v = UnsafeRawBufferPointer(start: sqlite3_column_blob(scanStmt, 1),
                                           count: Int(sqlite3_column_bytes(scanStmt, 1)))
            body(k, v)
            count += 1
            rc = sqlite3_step(scanStmt)
        }
        if rc != SQLITE_DONE { SQLite.failure(db, "scan") }
        return count
    }

    func endRead() {
        sqlite3_reset(selectStmt)
        SQLite.stepDone(db, commitStmt, "COMMIT")
    }

    /// An autocommit SELECT: the read transaction starts at the step and ends at the reset.
    @inline(__always)
    func readOnce<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        defer { sqlite3_reset(selectStmt) }
        return body(lookup(key))
    }

    @inline(__always)
    func commitToken() -> UInt64 {
        guard sqlite3_step(versionStmt) == SQLITE_ROW else { SQLite.failure(db, "PRAGMA data_version") }
        let v = sqlite3_column_int64(versionStmt, 0)
        sqlite3_reset(versionStmt)
        return UInt64(bitPattern: v)
    }

    func close() {
        guard db != nil else { return }
        for stmt in [insertStmt, selectStmt, scanStmt, beginStmt, commitStmt, versionStmt] {
            sqlite3_finalize(stmt)
        }
        insertStmt = nil; selectStmt = nil; scanStmt = nil
        beginStmt = nil; commitStmt = nil; versionStmt = nil
        sqlite3_close_v2(db)
        db = nil
    }
}
