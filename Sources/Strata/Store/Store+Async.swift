import Dispatch
import Foundation
import StrataCore
import Synchronization

// Transactions whose bodies may `await`.
//
// Threads: the engine identifies the in-process writer by the thread that began the write
// transaction (to refuse a nested write on that thread instead of deadlocking). An async body
// resumes on any thread of the pool, so each async write transaction gets a thread of its own
// (`TransactionThread`): it takes the writer lock, begins, and later commits or aborts, and it is
// never handed other work meanwhile. The body uses the transaction object from whichever thread
// it resumes on; the object is used by one task at a time and holds nothing thread-local. Taking
// the lock and committing (fsync) block that thread only, never the cooperative pool.
//
// What a suspended body holds: the process's writer lock (other writes of this process wait; other
// processes could not write anyway, the writer lock of the lock file is held by this handle) and
// the pages of its base snapshot. Readers never wait on the writer in this design, neither in this
// process nor in any other: a write body that awaits forever delays other writes, never a read.

/// The store whose write transaction the current task is running, so a nested write from inside
/// an async body is refused instead of waiting forever for the lock its own task holds.
enum WriteScope {
    @TaskLocal static var database: ObjectIdentifier?

    static func refuseNesting(_ database: Database) throws {
        if WriteScope.database == ObjectIdentifier(database) {
            throw StrataError.misuse("write transactions cannot be nested; use the transaction context you already have")
        }
    }
}

/// Lets a value cross to a Dispatch thread and back. Only for values one party uses at a time
/// (a transaction handed from the thread that began it to the task that runs its body).
struct Handoff<Value>: @unchecked Sendable {
    let value: Value
}

extension Store {
    /// Runs `body` in one read transaction whose body may `await`: every load sees the same
    /// committed snapshot, also across suspensions. The snapshot is pinned until `body` returns
    /// (the writer cannot reuse the pages it reaches), so keep such bodies short. Beginning a read
    /// never blocks (a few atomic operations), so nothing leaves the caller's executor.
    ///
    /// ```swift
    /// let (count, first) = try await store.read { tx in
    ///     let count = try tx[books].count
    ///     await progress.report(count)
    ///     return (count, try tx[books].loadAll(limit: 1).first)
    /// }
    /// ```
    /// Throws what `body` throws, or `StrataError` if the snapshot cannot be read.
    @discardableResult
    public func read<Result>(isolation: isolated (any Actor)? = #isolation,
                             _ body: (StoreReadContext) async throws -> Result) async throws -> Result {
        let transaction = try database.beginRead()
        defer { transaction.end() }
        return try await body(StoreReadContext(transaction: transaction))
    }
}

extension Store where Access == ReadWrite {
    /// Runs `body` in one write transaction whose body may `await`; it commits as one generation
    /// when `body` returns.
    ///
    /// ```swift
    /// try await store.write { tx in
    ///     let price = try await catalog.price(of: isbn)      // any async call
    ///     try tx[books].persist(Book(..., price: price))
    /// }
    /// ```
    ///
    /// - The process's writer lock is held while `body` runs, including while it is suspended:
    ///   other writes of this process wait (on Dispatch threads, never on the cooperative pool).
    ///   Readers are never blocked, in this process or any other: a body that never returns
    ///   delays writers only.
    /// - If `body` throws, or the task is cancelled before the commit begins, nothing is written:
    ///   the transaction is rolled back and the error (`CancellationError`) is thrown. A task
    ///   cancelled while waiting for the writer lock stops waiting at once.
    /// - Waiting for the writer lock and the commit's syncs run on a Dispatch thread.
    /// - A nested `store.write` (sync or async), or opening a datastore, inside `body` throws
    ///   `StrataError.misuse`: use the context you have (open datastores before). Tasks `body`
    ///   starts (child tasks, `Task {}`) inherit this, `Task.detached` does not. The engine's
    ///   own `database.write` must not be called inside `body`: it would wait for this writer.
    @discardableResult
    public func write<Result>(isolation: isolated (any Actor)? = #isolation,
                              _ body: (StoreWriteContext) async throws -> Result) async throws -> Result {
        try WriteScope.refuseNesting(database)
        try Task.checkCancellation()
        let thread = TransactionThread()
        let transaction: WriteTransaction
        do {
            transaction = try await beginWrite(on: thread).value
        } catch {
            thread.finish()
            throw error
        }
        let owned = Handoff(value: transaction)
        let result: Result
        do {
            result = try await WriteScope.$database.withValue(ObjectIdentifier(database)) {
                let context = StoreWriteContext(transaction: transaction, changeLogMemory: changeLogMemory)
                defer { context.endBody() }
                return try await body(context)
            }
            try Task.checkCancellation()
        } catch {
            _ = try? await thread.run { owned.value.abort() }
            thread.finish()
            throw error
        }
        defer { thread.finish() }
        try await thread.run { try owned.value.commit() }
        return result
    }

    /// Begins the write transaction on `thread` (it may wait for the writer lock). A task
    /// cancelled while waiting resumes at once with `CancellationError`; the transaction begun
    /// later for it is aborted on that thread right away.
    private func beginWrite(on thread: TransactionThread) async throws -> Handoff<WriteTransaction> {
        let waiter = WriterWaiter()
        let database = self.database
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Handoff<WriteTransaction>, Error>) in
                guard waiter.install(continuation) else { return }
                thread.submit {
                    waiter.deliver(Swift.Result { Handoff(value: try database.beginWrite()) })
                }
            }
        } onCancel: {
            waiter.cancel()
        }
    }
}

/// A thread that runs one async write transaction's blocking steps (begin, commit or abort) in
/// order and exits after `finish()`. Jobs submitted after `finish()` still run first.
final class TransactionThread: Sendable {
    private let jobs = Mutex<(pending: [@Sendable () -> Void], finishing: Bool)>(([], false))
    private let available = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in loop() }
        thread.name = "strata.write-transaction"
        thread.start()
    }

    private func loop() {
        while true {
            available.wait()
            let (job, finishing) = jobs.withLock { jobs in (jobs.pending.isEmpty ? nil : jobs.pending.removeFirst(), jobs.finishing) }
            if let job { job() } else if finishing { return }
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.pending.append(job) }
        available.signal()
    }

    /// Runs `work` on this thread and awaits its result.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    /// Ends the thread once the jobs already submitted have run.
    func finish() {
        jobs.withLock { $0.finishing = true }
        available.signal()
    }
}

/// The hand-over between a task waiting for the writer lock and the Dispatch thread taking it:
/// exactly one of "delivered" and "cancelled" resumes the task; a transaction delivered after
/// cancellation is aborted.
private final class WriterWaiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Handoff<WriteTransaction>, Error>?
        var cancelled = false
    }
    private let state = Mutex(State())

    /// Stores the continuation; false (and resumed with `CancellationError`) if already cancelled.
    func install(_ continuation: CheckedContinuation<Handoff<WriteTransaction>, Error>) -> Bool {
        let cancelled = state.withLock { state -> Bool in
            if !state.cancelled { state.continuation = continuation }
            return state.cancelled
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    func cancel() {
        let continuation = state.withLock { state in
            state.cancelled = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(throwing: CancellationError())
    }

    func deliver(_ result: Result<Handoff<WriteTransaction>, Error>) {
        let continuation = state.withLock { state in
            defer { state.continuation = nil }
            return state.continuation
        }
        if let continuation {
            continuation.resume(with: result)
        } else if case .success(let transaction) = result {
            transaction.value.abort()
        }
    }
}
