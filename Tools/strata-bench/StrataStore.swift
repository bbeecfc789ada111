// Strata engine: the store `<dir>/store.strata`, one tree "bench", values read without copying.
// Durable = Durability.full (pages and meta written, then one fdatasync per commit); otherwise
// .none. Readers/observer open .readOnly. Commit token: Database.generation.
import StrataBenchKit
import StrataCore

final class StrataStore: KVStore {
    static let kind: EngineKind = "strata"
    static let treeName = "bench"

    private var db: Database?
    private var writer: WriteTransaction?
    private var writeTree: Tree?
    private var reader: ReadTransaction?
    private var readTree: Tree?
    private var waiter: CommitWaiter?
    private let schedule: PollingSchedule

    init(directory: String, options: OpenOptions) {
        var settings = DatabaseOptions()
        settings.durability = options.durable ? .full : .none
        settings.createIfMissing = options.create
        switch options.notifySchedule {
        case "uniform": schedule = PollingSchedule(followsCadence: false)
        case "dense": schedule = PollingSchedule(spinsAroundForecast: false)  // cadence, polls instead of spinning
        case "frugal": schedule = .frugal
        case "low-latency": schedule = .lowLatency
        default: schedule = .standard
        }
        let path = directory + "/store.strata"
        db = StrataStore.must("open \(path)") {
            try Database(path: path, mode: options.readOnly ? .readOnly : .readWrite, options: settings)
        }
    }

    deinit { close() }

    /// Runs `body`; any error is fatal.
    @inline(__always)
    private static func must<T>(_ what: @autoclosure () -> String, _ body: () throws -> T) -> T {
        do {
            return try body()
        } catch {
            BenchMain.fatal("strata \(what()): \(error)")
        }
    }

    private var database: Database {
        guard let db else { BenchMain.fatal("strata: the store is closed") }
        return db
    }

    /// The handle, for clients on other threads (`Database` is thread-safe).
    var sharedDatabase: Database { database }

    func beginWrite() {
        let db = database
        StrataStore.must("beginWrite") {
            let tx = try db.beginWrite()
            writeTree = try tx.openOrCreateTree(StrataStore.treeName)
            writer = tx
        }
    }

    @inline(__always)
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        guard let writer, let writeTree else { BenchMain.fatal("strata: put outside a write transaction") }
        _ = StrataStore.must("put") { try writer.put(key, value, in: writeTree) }
    }

    func commitWrite() {
        guard let tx = writer else { BenchMain.fatal("strata: commit outside a write transaction") }
        writer = nil
        writeTree = nil
        StrataStore.must("commit") { try tx.commit() }
    }

    func beginRead() {
        let db = database
        StrataStore.must("beginRead") {
            let tx = try db.beginRead()
            readTree = try tx.tree(StrataStore.treeName)
            reader = tx
        }
    }

    @inline(__always)
    func get(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let reader, let readTree else { BenchMain.fatal("strata: get outside a read transaction") }
        // The view points into the shared mapping and stays valid until the transaction ends.
        return StrataStore.must("get") { try reader.get(key, in: readTree)?.withUnsafeBytes { $0 } }
    }

    func scan(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Int {
        guard let reader, let readTree else { BenchMain.fatal("strata: scan outside a read transaction") }
        return StrataStore.must("scan") {
            var count = 0
            try reader.scan(readTree) { key, value in
                key.withUnsafeBytes { k in value.withUnsafeBytes { v in body(k, v) } }
                count += 1
                return true
            }
            return count
        }
    }

    func endRead() {
        reader?.end()
        reader = nil
        readTree = nil
    }

    /// begin, open the tree, get, end: a tree handle belongs to one transaction.
    @inline(__always)
    func readOnce<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        let db = database
        return StrataStore.must("readOnce") {
            let tx = try db.beginRead()
            defer { tx.end() }
            guard let value = try tx.get(key, in: try tx.tree(StrataStore.treeName)) else { return body(nil) }
            return value.withUnsafeBytes { body($0) }
        }
    }

    @inline(__always)
    func commitToken() -> UInt64 { database.generation }

    /// Strata's own notification path: the adaptive, futex-free poller of the shared counter.
    func waitForCommit(after token: UInt64, timeout: Double) -> UInt64? {
        if waiter == nil { waiter = database.commitWaiter(schedule: schedule) }
        return waiter!.wait(after: token, timeout: timeout)
    }

    func close() {
        writer?.abort()
        writer = nil
        writeTree = nil
        endRead()
        db?.close()
        db = nil
    }
}
