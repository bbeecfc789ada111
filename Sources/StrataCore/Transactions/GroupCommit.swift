import Synchronization

/// Group commit: the write requests of many threads of this process share commits.
///
/// A thread calling `Database.write` queues its request. If no thread is leading a commit, it
/// leads: it takes every queued request, runs each body inside its own nested transaction of one
/// write transaction, in queue order, and commits once — one sync covers the whole group.
/// Requests arriving while the bodies run join the group; so do requests arriving while the
/// commit before it is still syncing (this one could not write before that sync returns anyway).
/// Once the group's pages and meta are written, the leader gives up the lead and wakes the oldest
/// queued caller as a candidate for the next one — which builds on this commit while it syncs
/// (pipelined commits, see `PendingCommit`) — then syncs, and wakes the callers of its own group
/// with their results. A caller returns only once the commit holding its changes is durable (or
/// with its own error; a failed commit fails every request of the group that had succeeded, and
/// the group built on it).
///
/// The lead is free between groups rather than handed to a sleeping thread: whichever thread gets
/// there first — the woken candidate, or a running thread that just arrived — leads, and takes the
/// queued requests along. Handing it to the candidate would stall every writer until the
/// scheduler runs that one thread (a lock convoy: milliseconds when the cores are busy). Waiting
/// threads sleep on a semaphore each (a futex; no spinning).
final class WriteQueue: @unchecked Sendable {
    /// At most this many requests per group: bounds the transaction (and the leader's own wait).
    static let maximumGroup = 512

    private struct State {
        var pending: [WriteRequest] = []
        var isLeading = false
        /// The leader sleeps on `arrival` until a request queues (see `waitForArrival`).
        var leaderAwaitsArrival = false
    }
    private let state = Mutex(State())
    private let arrival = BlockingLock(initiallyAvailable: false)
    /// Commits that held more than one request, and requests they held (for tests and benchmarks).
    let groupedCommits = Atomic<UInt64>(0)
    let groupedRequests = Atomic<UInt64>(0)

    /// Queues `request`; true if the caller must lead now (nobody was leading).
    func enqueue(_ request: WriteRequest) -> Bool {
        let (leads, wakesLeader) = state.withLock { state in
            state.pending.append(request)
            if state.isLeading {
                defer { state.leaderAwaitsArrival = false }
                return (false, state.leaderAwaitsArrival)
            }
            state.isLeading = true
            return (true, false)
        }
        if wakesLeader { arrival.unlock() }
        return leads
    }

    /// The leader, its bodies run while the commit before is still syncing: sleeps until a
    /// request queues (it joins the group) or that commit's sync returns (the group commits).
    /// May return early (a stale wake-up); the caller checks again.
    /// `registered` keeps `previous` from being asked twice to wake the leader.
    func waitForArrival(orFinishOf previous: PendingCommit, registered: inout Bool) {
        let waits = state.withLock { state in
            guard state.pending.isEmpty else { return false }
            state.leaderAwaitsArrival = true
            return true
        }
        guard waits else { return }
        if !registered {
            registered = true
            previous.wakeWhenFinished(arrival)
        }
        arrival.lock()
        state.withLock { $0.leaderAwaitsArrival = false }
    }

    /// Takes the lead for a caller that found nobody leading and nothing queued (the lone-writer
    /// fast path: no request object, no group).
    func leadIfIdle() -> Bool {
        state.withLock { state in
            guard !state.isLeading, state.pending.isEmpty else { return false }
            state.isLeading = true
            return true
        }
    }

    /// After a wake-up: true if the caller must lead (its request is still queued and nobody
    /// leads).
    func takeLeadIfFree(for request: WriteRequest) -> Bool {
        state.withLock { state in
            // A leader frees the lead before its group's sync returns: a request taken into a
            // group waits for that group, even when nobody leads.
            if request.isTaken || state.isLeading { return false }
            state.isLeading = true
            return true
        }
    }

    /// The next group: the queued requests, oldest first, at most `limit`.
    func takeGroup(limit: Int = WriteQueue.maximumGroup) -> [WriteRequest] {
        state.withLock { state in
            let count = min(state.pending.count, limit)
            let group = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            for request in group { request.isTaken = true }
            return group
        }
    }

    /// Ends a leader's turn; returns the oldest queued request, to be woken as a candidate leader.
    func releaseLead() -> WriteRequest? {
        state.withLock { state in
            state.isLeading = false
            return state.pending.first
        }
    }
}

/// One caller's write: its body (with the caller's result slot captured) and, once done, its
/// error. The caller sleeps on `wakeup` until it is done or may lead.
final class WriteRequest: @unchecked Sendable {
    /// Cleared by the leader before it wakes the caller: the caller's closure is only borrowed
    /// (`withoutActuallyEscaping`) and must not outlive its call.
    var body: ((WriteTransaction) throws -> Void)?
    /// Written by the leader before it sets `done` (release); read by the caller after it saw it.
    var error: (any Error)?
    /// Taken into a group by a leader (read and written under the queue's mutex only).
    var isTaken = false
    private let done = Atomic<Bool>(false)
    private let wakeup = BlockingLock(initiallyAvailable: false)

    init(body: @escaping (WriteTransaction) throws -> Void) {
        self.body = body
    }

    var isDone: Bool { done.load(ordering: .acquiring) }

    func markDone() { done.store(true, ordering: .releasing) }

    /// Sleeps until woken (done, or a candidate for the lead). Wake-ups may be more than waits.
    func wait() { wakeup.lock() }

    func wake() { wakeup.unlock() }
}

extension Database {
    /// Runs `body` in a write transaction shared with concurrent callers (group commit) and
    /// returns once its changes are committed (see `write`).
    func groupWrite<Result>(_ body: (WriteTransaction) throws -> Result, writer: WriterSession) throws -> Result {
        let queue = writer.writeQueue
        if queue.leadIfIdle() {
            // Alone: the body runs in a plain transaction on this thread, as without group commit;
            // writes that arrive meanwhile queue and the first of them is woken to lead next, as
            // soon as this commit is written (it builds on it while this one syncs).
            var pending: PendingCommit?
            let result: Result
            do {
                defer { if let candidate = queue.releaseLead() { candidate.wake() } }
                let transaction = try beginWrite()
                do {
                    transaction.isInsideWriteBody = true
                    result = try body(transaction)
                    transaction.isInsideWriteBody = false
                    if transaction.isActive { pending = try transaction.commitWritingPages() }
                } catch {
                    transaction.abort()
                    throw error
                }
            }
            if let pending { try makeDurable(pending) }
            return result
        }
        var result: Result?
        try withoutActuallyEscaping(body) { body in
            let request = WriteRequest { transaction in result = try body(transaction) }
            var leads = queue.enqueue(request)
            while true {
                // A leader's own request may miss its group (more than `maximumGroup` queued).
                if leads { lead(queue, own: request) } else { request.wait() }
                if request.isDone { break }
                leads = queue.takeLeadIfFree(for: request)
            }
            if let error = request.error { throw error }
        }
        return result!
    }

    /// Commits one group (holding `own`): writes it, frees the lead (the next leader builds on
    /// this commit while it syncs), syncs it, then wakes the group's other callers.
    private func lead(_ queue: WriteQueue, own: WriteRequest) {
        var group = queue.takeGroup()
        let written = commit(&group, writer: writer!)
        for request in group { request.body = nil }
        if let candidate = queue.releaseLead() { candidate.wake() }
        if let (pending, succeeded) = written {
            do {
                if let pending { try makeDurable(pending) }
                if group.count > 1 {
                    writer!.writeQueue.groupedCommits.add(1, ordering: .relaxed)
                    writer!.writeQueue.groupedRequests.add(UInt64(group.count), ordering: .relaxed)
                }
            } catch {
                for request in succeeded { request.error = error }
            }
        }
        for request in group { request.markDone() }
        for request in group where request !== own { request.wake() }
    }

    /// Runs the bodies of `group` in one write transaction and commits it. A group of one runs
    /// its body directly in the transaction, as an ungrouped write would. Requests that queue
    /// while a group of several runs its bodies join it (they are added to `group`) up to
    /// `maximumGroup`: callers woken by the previous commit re-queue just then, and joining costs
    /// them no wait, where the next group would cost them a whole flush.
    /// Returns, if the commit was written, what is still to be synced of it (nil: nothing) and
    /// the requests it holds; a request that failed has its error set.
    private func commit(_ group: inout [WriteRequest], writer: WriterSession) -> (PendingCommit?, [WriteRequest])? {
        let transaction: WriteTransaction
        do {
            transaction = try beginWrite()
        } catch {
            for request in group { request.error = error }
            return nil
        }
        if group.count == 1 && (writer.inFlight?.isFinished ?? true) {
            do {
                transaction.isInsideWriteBody = true
                try group[0].body?(transaction)
                transaction.isInsideWriteBody = false
                return (transaction.isActive ? try transaction.commitWritingPages() : nil, group)
            } catch {
                transaction.abort()
                group[0].error = error
            }
            return nil
        }
        var succeeded: [WriteRequest] = []
        succeeded.reserveCapacity(group.count)
        var next = 0
        while next < group.count {
            let request = group[next]
            next += 1
            do {
                try transaction.nested { try request.body?($0) }
                succeeded.append(request)
            } catch {
                request.error = error
            }
            guard next == group.count && group.count < WriteQueue.maximumGroup else { continue }
            group += writer.writeQueue.takeGroup(limit: WriteQueue.maximumGroup - group.count)
            // While the commit before is still syncing, this one could not write anyway: requests
            // arriving meanwhile join it instead of waiting for the next flush.
            var registered = false
            while next == group.count, group.count < WriteQueue.maximumGroup, let previous = writer.inFlight, !previous.isFinished {
                writer.writeQueue.waitForArrival(orFinishOf: previous, registered: &registered)
                group += writer.writeQueue.takeGroup(limit: WriteQueue.maximumGroup - group.count)
            }
        }
        do {
            return (try transaction.commitWritingPages(), succeeded)
        } catch {
            transaction.abort()
            for request in succeeded { request.error = error }
            return nil
        }
    }

    /// Commits that carried more than one write request, and the requests they carried, since this
    /// handle opened (0 for a read-only handle).
    public var groupCommitStatistics: (commits: UInt64, requests: UInt64) {
        guard let writer else { return (0, 0) }
        return (writer.writeQueue.groupedCommits.load(ordering: .relaxed), writer.writeQueue.groupedRequests.load(ordering: .relaxed))
    }
}
