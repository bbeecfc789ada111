// groupcommit on the peers. LMDB: every thread uses the one shared environment (its write lock
// serializes them; each commit is its own flush). SQLite: a connection per thread (WAL,
// synchronous as the store was opened, busy timeout 10 s); each autocommit INSERT is a commit.
import CLMDB
import CSQLite
import StrataBenchKit

extension LMDBStore: ConcurrentKVStore {
    func threadClient() -> any ThreadClient { LMDBThreadClient(env: environment, dbi: database) }
    func commitCount() -> UInt64? { nil }
}

final class LMDBThreadClient: ThreadClient {
    let env: OpaquePointer?
    let dbi: MDB_dbi

    init(env: OpaquePointer?, dbi: MDB_dbi) {
        self.env = env
        self.dbi = dbi
    }

    func commitOne(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        var txn: OpaquePointer?
        LMDB.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin(write)")
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        LMDB.check(mdb_put(txn, dbi, &k, &v, 0), "mdb_put")
        LMDB.check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    func readOne(_ key: UnsafeRawBufferPointer) -> Bool {
        var txn: OpaquePointer?
        LMDB.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin(read)")
        defer { mdb_txn_abort(txn) }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        return mdb_get(txn, dbi, &k, &v) == 0
    }

    func close() {}
}

extension SQLiteStore: ConcurrentKVStore {
    func threadClient() -> any ThreadClient { SQLiteThreadClient(path: path, durable: durable) }
    func commitCount() -> UInt64? { nil }
}

final class SQLiteThreadClient: ThreadClient {
    private var db: OpaquePointer?
    private let insertStmt: OpaquePointer?
    private let selectStmt: OpaquePointer?

    init(path: String, durable: Bool) {
        db = SQLite.open(path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX)
        SQLite.exec(db, "PRAGMA journal_mode=WAL")
        SQLite.exec(db, durable ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF")
        insertStmt = SQLite.prepare(db, "INSERT OR REPLACE INTO kv(k, v) VALUES(?1, ?2)")
        selectStmt = SQLite.prepare(db, "SELECT v FROM kv WHERE k = ?1")
    }

    func commitOne(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        sqlite3_bind_blob(insertStmt, 1, key.baseAddress, Int32(key.count), nil)
        sqlite3_bind_blob(insertStmt, 2, value.baseAddress, Int32(value.count), nil)
        SQLite.stepDone(db, insertStmt, "INSERT")
    }

    func readOne(_ key: UnsafeRawBufferPointer) -> Bool {
        defer { sqlite3_reset(selectStmt) }
        sqlite3_bind_blob(selectStmt, 1, key.baseAddress, Int32(key.count), nil)
        return sqlite3_step(selectStmt) == SQLITE_ROW
    }

    func close() {
        sqlite3_finalize(insertStmt)
        sqlite3_finalize(selectStmt)
        sqlite3_close_v2(db)
        db = nil
    }
}
