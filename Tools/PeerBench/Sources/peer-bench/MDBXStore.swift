// libmdbx engine: one environment directory per store (mdbx.dat + mdbx.lck), upper size 64 GiB,
// the unnamed main table. Durable = MDBX_SYNC_DURABLE (every commit flushed); otherwise
// MDBX_SAFE_NOSYNC (no flush; like Strata's .none, a system crash may lose commits but never
// corrupts). Threads share the environment; a transaction stays on the thread that began it.
import CMDBX
import Glibc
import StrataBenchKit

final class MDBXStore: KVStore, ConcurrentKVStore {
    static let kind: EngineKind = "mdbx"
    static let upperSize = 64 << 30

    private let library = MDBXLibrary.shared
    private var env: OpaquePointer?
    private var txn: OpaquePointer?
    private var dbi: MDBX_dbi = 0

    init(directory: String, options: OpenOptions) {
        let l = library
        l.check(l.envCreate(&env), "mdbx_env_create")
        l.check(l.envSetGeometry(env, -1, -1, MDBXStore.upperSize, -1, -1, -1), "mdbx_env_set_geometry")
        var flags = UInt32(options.durable ? PB_MDBX_SYNC_DURABLE : PB_MDBX_SAFE_NOSYNC)
        if options.readOnly { flags |= UInt32(PB_MDBX_RDONLY) }
        l.check(l.envOpen(env, directory, flags, 0o644), "mdbx_env_open \(directory)")
        var t: OpaquePointer?
        l.check(l.txnBegin(env, nil, UInt32(options.readOnly ? PB_MDBX_TXN_RDONLY : PB_MDBX_TXN_READWRITE), &t), "mdbx_txn_begin")
        l.check(l.dbiOpen(t, nil, UInt32(options.readOnly ? PB_MDBX_DB_DEFAULTS : PB_MDBX_CREATE), &dbi), "mdbx_dbi_open")
        l.check(l.txnCommit(t), "mdbx_txn_commit")
    }

    deinit { close() }

    @inline(__always)
    static func val(_ b: UnsafeRawBufferPointer) -> MDBX_val {
        MDBX_val(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress), iov_len: b.count)
    }

    func beginWrite() { library.check(library.txnBegin(env, nil, UInt32(PB_MDBX_TXN_READWRITE), &txn), "mdbx_txn_begin(write)") }

    @inline(__always)
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        var k = MDBXStore.val(key)
        var v = MDBXStore.val(value)
        library.check(library.put(txn, dbi, &k, &v, UInt32(PB_MDBX_UPSERT)), "mdbx_put")
    }

    func commitWrite() {
        library.check(library.txnCommit(txn), "mdbx_txn_commit")
        txn = nil
    }

    func beginRead() { library.check(library.txnBegin(env, nil, UInt32(PB_MDBX_TXN_RDONLY), &txn), "mdbx_txn_begin(read)") }

    @inline(__always)
    func get(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var k = MDBXStore.val(key)
        var v = MDBX_val()
        let rc = library.get(txn, dbi, &k, &v)
        if rc == PB_MDBX_NOTFOUND { return nil }
        library.check(rc, "mdbx_get")
        return UnsafeRawBufferPointer(start: v.iov_base, count: v.iov_len)
    }

    func scan(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Int {
        var cursor: OpaquePointer?
        library.check(library.cursorOpen(txn, dbi, &cursor), "mdbx_cursor_open")
        defer { library.cursorClose(cursor) }
        var k = MDBX_val()
        var v = MDBX_val()
        var count = 0
        var rc = library.cursorGet(cursor, &k, &v, Int32(PB_MDBX_FIRST))
        while rc == PB_MDBX_SUCCESS {
            body(UnsafeRawBufferPointer(start: k.iov_base, count: k.iov_len), UnsafeRawBufferPointer(start: v.iov_base, count: v.iov_len))
            count += 1
            rc = library.cursorGet(cursor, &k, &v, Int32(PB_MDBX_NEXT))
        }
        if rc != PB_MDBX_NOTFOUND { library.check(rc, "mdbx_cursor_get") }
        return count
    }

    func endRead() {
        _ = library.txnAbort(txn)
        txn = nil
    }


    /// The id of the newest committed transaction (a read transaction sees it).
    func commitToken() -> UInt64 {
        var t: OpaquePointer?
        library.check(library.txnBegin(env, nil, UInt32(PB_MDBX_TXN_RDONLY), &t), "mdbx_txn_begin(token)")
        defer { _ = library.txnAbort(t) }
        return library.txnID(t)
    }

    func threadClient() -> any ThreadClient { MDBXThreadClient(store: self) }
    func commitCount() -> UInt64? { nil }

    func close() {
        if let t = txn { _ = library.txnAbort(t); txn = nil }
        if let e = env { _ = library.envClose(e); env = nil }
    }

    /// One put per write transaction on the calling thread's own transactions.
    final class MDBXThreadClient: ThreadClient {
        let store: MDBXStore
        init(store: MDBXStore) { self.store = store }

        func commitOne(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
            let l = store.library
            var t: OpaquePointer?
            l.check(l.txnBegin(store.env, nil, UInt32(PB_MDBX_TXN_READWRITE), &t), "mdbx_txn_begin(write)")
            var k = MDBXStore.val(key)
            var v = MDBXStore.val(value)
            l.check(l.put(t, store.dbi, &k, &v, UInt32(PB_MDBX_UPSERT)), "mdbx_put")
            l.check(l.txnCommit(t), "mdbx_txn_commit")
        }

        func readOne(_ key: UnsafeRawBufferPointer) -> Bool {
            let l = store.library
            var t: OpaquePointer?
            l.check(l.txnBegin(store.env, nil, UInt32(PB_MDBX_TXN_RDONLY), &t), "mdbx_txn_begin(read)")
            defer { _ = l.txnAbort(t) }
            var k = MDBXStore.val(key)
            var v = MDBX_val()
            return l.get(t, store.dbi, &k, &v) == PB_MDBX_SUCCESS
        }

        func close() {}
    }
}
