// LMDB engine: one environment directory per store, map size 64 GiB, the unnamed main DB.
import CLMDB
import Glibc
import StrataBenchKit

final class LMDBStore: KVStore {
    static let kind: EngineKind = "lmdb"
    /// 64 GiB, or `PEER_LMDB_MAP_SIZE_MIB` MiB (valgrind cannot reserve 64 GiB: mdb_env_open
    /// fails with EINVAL under callgrind, so instruction counts need a smaller map).
    static let mapSize: Int = {
        if let text = getenv("PEER_LMDB_MAP_SIZE_MIB"), let mebibytes = Int(String(cString: text)), mebibytes > 0 { return mebibytes << 20 }
        return 64 << 30
    }()

    private var env: OpaquePointer?
    private var txn: OpaquePointer?
    private var dbi: MDB_dbi = 0
    /// For the thread clients of groupcommit (an environment is shared by threads).
    var environment: OpaquePointer? { env }
    var database: MDB_dbi { dbi }

    init(directory: String, options: OpenOptions) {
        LMDB.check(mdb_env_create(&env), "mdb_env_create")
        LMDB.check(mdb_env_set_mapsize(env, LMDBStore.mapSize), "mdb_env_set_mapsize")
        var flags: UInt32 = 0
        if !options.durable { flags |= UInt32(MDB_NOSYNC) }
        if options.readOnly { flags |= UInt32(MDB_RDONLY) }
        LMDB.check(mdb_env_open(env, directory, flags, 0o644), "mdb_env_open \(directory)")
        // Resolve the main DB handle once; it stays valid for the life of the environment.
        var t: OpaquePointer?
        LMDB.check(mdb_txn_begin(env, nil, options.readOnly ? UInt32(MDB_RDONLY) : 0, &t), "mdb_txn_begin")
        LMDB.check(mdb_dbi_open(t, nil, 0, &dbi), "mdb_dbi_open")
        LMDB.check(mdb_txn_commit(t), "mdb_txn_commit")
    }

    deinit { close() }

    @inline(__always)
    private static func val(_ b: UnsafeRawBufferPointer) -> MDB_val {
        MDB_val(mv_size: b.count, mv_data: UnsafeMutableRawPointer(mutating: b.baseAddress))
    }

    func beginWrite() {
        LMDB.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin(write)")
    }

    @inline(__always)
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        var k = LMDBStore.val(key)
        var v = LMDBStore.val(value)
        LMDB.check(mdb_put(txn, dbi, &k, &v, 0), "mdb_put")
    }

    func commitWrite() {
        LMDB.check(mdb_txn_commit(txn), "mdb_txn_commit")
        txn = nil
    }

    func beginRead() {
        LMDB.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin(read)")
    }

    @inline(__always)
    func get(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var k = LMDBStore.val(key)
        var v = MDB_val()
        let rc = mdb_get(txn, dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        LMDB.check(rc, "mdb_get")
        return UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
    }

    func scan(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Int {
        var cursor: OpaquePointer?
        LMDB.check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var k = MDB_val()
        var v = MDB_val()
        var count = 0
        var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
        while rc == 0 {
            body(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
                 UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            count += 1
            rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { LMDB.check(rc, "mdb_cursor_get") }
        return count
    }

    func endRead() {
        mdb_txn_abort(txn)
        txn = nil
    }


    @inline(__always)
    func commitToken() -> UInt64 {
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        return UInt64(info.me_last_txnid)
    }

    func close() {
        if let t = txn { mdb_txn_abort(t); txn = nil }
        if let e = env { mdb_env_close(e); env = nil }
    }
}
