import Dispatch
import Foundation
import StrataCore

/// Marker types that make a store's access mode part of its type.
public protocol StoreAccess: Sendable {}
/// The writer: one process at a time, enforced by the engine's writer lock.
public enum ReadWrite: StoreAccess {}
/// A reader: cannot write, by construction (write methods do not exist on its types).
public enum ReadOnly: StoreAccess {}

/// Selects the read-only initializer: `Store(at: path, mode: .readOnly)`.
public enum ReadOnlyMode: Sendable { case readOnly }

/// A store of typed datastores over one StrataCore database.
///
/// ```swift
/// let store = try Store(at: "library.strata")                      // Store<ReadWrite>
/// let reader = try Store(at: "library.strata", mode: .readOnly)    // Store<ReadOnly>
/// ```
public final class Store<Access: StoreAccess>: Sendable {
    /// The database under this store, for its whole life. Invariant: a `let`, never replaced.
    /// `Datastore` keeps it unretained (`Datastore.database`) on the strength of that: if a store
    /// could swap or drop its database, a datastore would call through a freed object.
    public let database: Database
    /// Removes the store's directory on deinit (in-memory stores).
    private let temporaryDirectory: String?
    /// Runs async writes off the cooperative pool (they block on the writer lock and fsync).
    /// Concurrent, so that concurrent async writes reach `Database.write` together and share
    /// commits (group commit).
    let writeQueue = DispatchQueue(label: "strata.store.write", attributes: .concurrent)
    /// What write transactions learn about the change logs and hand on to the next ones.
    let changeLogMemory = ChangeLogMemory()
    /// The per-datastore write state handed from one write context to the next.
    let writeContextReuse = WriteContextReuse()

    init(database: Database, temporaryDirectory: String? = nil) {
        self.database = database
        self.temporaryDirectory = temporaryDirectory
    }

    deinit {
        if let temporaryDirectory {
            database.close()
            try? FileManager.default.removeItem(atPath: temporaryDirectory)
        }
    }

    public var path: String { database.path }

    /// Closes the store: a writer releases the writer lock (another process may then write), and
    /// every later call on the store or its datastores throws `StrataError.closed`. Transactions
    /// already running finish; observation streams end. Idempotent; also done on deinit.
    public func close() { database.close() }

    /// The datastore described by `format` in this store. Read-write stores create its trees and
    /// record its declaration the first time.
    public func datastore<F: DatastoreFormat>(_ format: F.Type) throws -> Datastore<F, Access> {
        try Datastore(store: self)
    }

    /// Runs `body` in one read transaction: every load sees the same committed snapshot.
    @discardableResult
    public func read<Result>(_ body: (StoreReadContext) throws -> Result) throws -> Result {
        try database.read { try body(StoreReadContext(transaction: $0)) }
    }

    /// Like `read`, but never runs on the caller's thread if that is the cooperative pool.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (StoreReadContext) throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Swift.Result { try self.read(body) })
            }
        }
    }
}

extension Store where Access == ReadWrite {
    /// Opens the store at `path` for writing, creating it if missing.
    public convenience init(at path: String, options: DatabaseOptions = DatabaseOptions()) throws {
        self.init(database: try Database(path: path, mode: .readWrite, options: options))
    }

    /// A store in memory (a private directory on tmpfs when available, no syncs), removed when the
    /// store is released: the same API and engine, for tests.
    public static func inMemory() throws -> Store<ReadWrite> {
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let directory = base + "/strata-memory-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var options = DatabaseOptions()
        options.durability = .none
        let database = try Database(path: directory + "/store.strata", options: options)
        return Store(database: database, temporaryDirectory: directory)
    }

    /// Runs `body` in one write transaction spanning any datastores: it commits as one generation
    /// when `body` returns, and writes nothing if it throws. Concurrent writes share commits (group
    /// commit, see `Database.write`): `body` may run on another thread while the caller waits, is
    /// serialized after every write queued before it, and rolls back alone if it throws.
    @discardableResult
    public func write<Result>(_ body: (StoreWriteContext) throws -> Result) throws -> Result {
        try WriteScope.refuseNesting(database)
        return try database.write {
            try StoreWriteContext(transaction: $0, changeLogMemory: changeLogMemory, reuse: writeContextReuse).run(body)
        }
    }

    /// Like `write`, run on a dedicated queue (it blocks on the writer lock and on fsync). A task
    /// cancelled before `body` starts throws `CancellationError` without running it; one cancelled
    /// before the commit rolls everything back and throws `CancellationError`.
    public func write<Result: Sendable>(_ body: @escaping @Sendable (StoreWriteContext) throws -> Result) async throws -> Result {
        try WriteScope.refuseNesting(database)
        try Task.checkCancellation()
        let cancelled = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                writeQueue.async {
                    continuation.resume(with: Swift.Result {
                        // Cancelled while waiting for the queue or the writer lock: do not start.
                        if cancelled.isSet { throw CancellationError() }
                        return try self.database.write { transaction in
                            if cancelled.isSet { throw CancellationError() }
                            let result = try StoreWriteContext(transaction: transaction, changeLogMemory: self.changeLogMemory,
                                                           reuse: self.writeContextReuse).run(body)
                            if cancelled.isSet { throw CancellationError() }
                            return result
                        }
                    })
                }
            }
        } onCancel: {
            cancelled.set()
        }
    }
}

extension Store where Access == ReadOnly {
    /// Opens an existing store for reading only.
    public convenience init(at path: String, mode: ReadOnlyMode, options: DatabaseOptions = DatabaseOptions()) throws {
        self.init(database: try Database(path: path, mode: .readOnly, options: options))
    }
}
