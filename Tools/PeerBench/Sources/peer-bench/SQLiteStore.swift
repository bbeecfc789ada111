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

    init(directory: String, options: OpenOptions) {
        let path = directory + "/kv.db"
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if options.create { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        if rc != SQLITE_OK { BenchMain.fatal("sqlite3_open_v2 \(path): \(String(cString: sqlite3_errstr(rc)))") }
        sqlite3_busy_timeout(db, 10_000)
        exec("PRAGMA journal_mode=WAL")
        exec(options.durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
        if options.create {
            exec("CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
        }
        insertStmt = prepare("INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)")
        selectStmt = prepare("SELECT v FROM kv WHERE k = ?1")
        scanStmt = prepare("SELECT k, v FROM kv ORDER BY k")
        beginStmt = prepare("BEGIN")
        commitStmt = prepare("COMMIT")
        versionStmt = prepare("PRAGMA data_version")
    }

    deinit { close() }

    private func failure(_ what: String) -> Never {
        BenchMain.fatal("sqlite \(what): \(String(cString: sqlite3_errmsg(db)))")
    }

    private func exec(_ sql: String) {
        if sqlite3_exec(db, sql, nil, nil, nil) != SQLITE_OK { failure(sql) }
    }

    private func prepare(_ sql: String) -> OpaquePointer? {
        var stmt: OpaquePointer?
        if sqlite3_prepare_v2(db, sql, -1, &stmt, nil) != SQLITE_OK { failure("prepare \(sql)") }
        return stmt
    }

    /// Steps a statement that returns no rows, then resets it.
    @inline(__always)
    private func run(_ stmt: OpaquePointer?, _ what: StaticString) {
        let rc = sqlite3_step(stmt)
        sqlite3_reset(stmt)
        if rc != SQLITE_DONE { failure("\(what)") }
    }

    func beginWrite() { run(beginStmt, "BEGIN") }

    @inline(__always)
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        // Destructor nil == SQLITE_STATIC: the buffers outlive the step below.
        sqlite3_bind_blob(insertStmt, 1, key.baseAddress, Int32(key.count), nil)
        sqlite3_bind_blob(insertStmt, 2, value.baseAddress, Int32(value.count), nil)
        run(insertStmt, "INSERT")
    }

    func commitWrite() { run(commitStmt, "COMMIT") }

    func beginRead() { run(beginStmt, "BEGIN") }

    /// Binds and steps the select statement; the caller resets it.
    @inline(__always)
    private func lookup(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        sqlite3_bind_blob(selectStmt, 1, key.baseAddress, Int32(key.count), nil)
        let rc = sqlite3_step(selectStmt)
        if rc == SQLITE_ROW {
            let n = Int(sqlite3_column_bytes(selectStmt, 0))
            return UnsafeRawBufferPointer(start: sqlite3_column_blob(selectStmt, 0), count: n)
        }
        if rc != SQLITE_DONE { failure("SELECT") }
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
        if rc != SQLITE_DONE { failure("scan") }
        return count
    }

    func endRead() {
        sqlite3_reset(selectStmt)
        run(commitStmt, "COMMIT")
    }

    /// An autocommit SELECT: the read transaction starts at the step and ends at the reset.
    @inline(__always)
    func readOnce<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        defer { sqlite3_reset(selectStmt) }
        return body(lookup(key))
    }

    @inline(__always)
    func commitToken() -> UInt64 {
        guard sqlite3_step(versionStmt) == SQLITE_ROW else { failure("PRAGMA data_version") }
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
