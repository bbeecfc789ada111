import Synchronization

/// A commit whose pages and meta are written but whose one sync has not returned yet: the
/// pipelined half of the commit protocol (see Commit.swift).
///
/// The thread that committed syncs it without holding the writer lock, so the next write
/// transaction can already run on top of it meanwhile (its bodies, its page copies, in memory).
/// That next transaction writes nothing to the file until this commit's sync has returned
/// (`Database.persist` waits for it first), and fails if the sync failed: it was built on a
/// state that never became durable. Readers learn of this commit only when its generation is
/// published, after the sync.
///
/// Written only by the syncing thread (`finish`), before `isFinished` turns true (release);
/// read by others after they saw it true (acquire).
final class PendingCommit: @unchecked Sendable {
    /// The commit being synced: the base of the next write transaction.
    let meta: MetaPage
    /// The last durable commit before it: the base again if this one fails.
    let previous: MetaPage
    private(set) var failure: (any Error)?
    /// The failed commit's meta could not even be wiped: the handle must stop writing.
    private(set) var poisonsWriter = false
    private let finished = Atomic<Bool>(false)
    /// Threads waiting in `waitUntilFinished`; each is woken by `finish`.
    private let waiters = Mutex<(isFinished: Bool, locks: [BlockingLock])>((false, []))

    init(meta: MetaPage, previous: MetaPage) {
        self.meta = meta
        self.previous = previous
    }

    var isFinished: Bool { finished.load(ordering: .acquiring) }

    /// Called once by the syncing thread: durable and published (`failure` nil), or failed.
    func finish(failure: (any Error)?, poisonsWriter: Bool) {
        self.failure = failure
        self.poisonsWriter = poisonsWriter
        finished.store(true, ordering: .releasing)
        let locks = waiters.withLock { state in
            state.isFinished = true
            return state.locks
        }
        for lock in locks { lock.unlock() }
    }

    /// Unlocks `lock` once this commit has finished (at once if it has).
    func wakeWhenFinished(_ lock: BlockingLock) {
        let now = waiters.withLock { state in
            if !state.isFinished { state.locks.append(lock) }
            return state.isFinished
        }
        if now { lock.unlock() }
    }

    /// Sleeps until `finish` was called (no spinning). Any number of calls, from any thread.
    func waitUntilFinished() {
        guard !isFinished else { return }
        let lock = BlockingLock(initiallyAvailable: false)
        wakeWhenFinished(lock)
        lock.lock()
    }
}

extension Database.WriterSession {
    /// Forgets the pending commit once it has finished; if it failed, the writer's base goes
    /// back to the commit before it, and what the session kept of the failed commit (its tree
    /// pages, its catalog entries) is dropped. Called under the writer lock. Returns the failure.
    @discardableResult
    func settle(_ pending: PendingCommit) -> (any Error)? {
        guard inFlight === pending else { return pending.failure }
        inFlight = nil
        guard let failure = pending.failure else { return nil }
        committed = pending.previous
        lastCommit.drain { recycle($0) }
        catalogMemory = WriterCatalogMemory()
        if pending.poisonsWriter { isPoisoned = true }
        return failure
    }

    /// Settles the pending commit if its sync already returned (at the start of a transaction:
    /// one that failed must not be built on).
    func settleIfFinished() {
        if let pending = inFlight, pending.isFinished { settle(pending) }
    }

    /// Waits for the pending commit's sync, then settles it; returns its failure.
    func waitForInFlight() -> (any Error)? {
        guard let pending = inFlight else { return nil }
        pending.waitUntilFinished()
        return settle(pending)
    }
}
