// The C calls that both the key-value and the typed engine of each peer make. A benchmark has
// no recovery: every failure ends the run with the library's own message.
import CLMDB
import CSQLite
import StrataBenchKit

enum LMDB {
    @inline(__always)
    static func check(_ rc: Int32, _ what: @autoclosure () -> String) {
        if rc != 0 { BenchMain.fatal("lmdb \(what()): \(String(cString: mdb_strerror(rc)))") }
    }
}

enum SQLite {
    /// Opens `path` with `flags` (a busy timeout of 10 s, so a second connection waits).
    static func open(_ path: String, flags: Int32) -> OpaquePointer? {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        if rc != SQLITE_OK { BenchMain.fatal("sqlite3_open_v2 \(path): \(String(cString: sqlite3_errstr(rc)))") }
        sqlite3_busy_timeout(db, 10_000)
        return db
    }

    static func failure(_ db: OpaquePointer?, _ what: String) -> Never {
        BenchMain.fatal("sqlite \(what): \(String(cString: sqlite3_errmsg(db)))")
    }

    static func exec(_ db: OpaquePointer?, _ sql: String) {
        if sqlite3_exec(db, sql, nil, nil, nil) != SQLITE_OK { failure(db, sql) }
    }

    static func prepare(_ db: OpaquePointer?, _ sql: String) -> OpaquePointer? {
        var statement: OpaquePointer?
        if sqlite3_prepare_v2(db, sql, -1, &statement, nil) != SQLITE_OK { failure(db, "prepare \(sql)") }
        return statement
    }

    /// Steps a statement that returns no rows, then resets it.
    @inline(__always)
    static func stepDone(_ db: OpaquePointer?, _ statement: OpaquePointer?, _ what: StaticString) {
        let rc = sqlite3_step(statement)
        sqlite3_reset(statement)
        if rc != SQLITE_DONE { failure(db, "\(what)") }
    }
}
