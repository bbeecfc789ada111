import Synchronization

/// Group commit: the write requests of many threads of this process share commits.
///
/// A thread calling `Database.write` queues its request. If no thread is leading a commit, it
/// leads: it takes every queued request, runs each body inside its own nested transaction of one
/// write transaction, in queue order, and commits once — one sync covers the whole group.
/// Requests arriving meanwhile queue. When the commit is done the leader gives up the lead, wakes
/// the oldest queued caller as a candidate for the next one, then wakes the callers of its own
/// group with their results. A caller returns only once the commit holding its changes is durable
/// (or with its own error; a failed commit fails every request of the group that had succeeded).
///
/// The lead is free between groups rather than handed to a sleeping thread: whichever thread gets
/// there first — the woken candidate, or a running thread that just arrived — leads, and takes the
/// queued requests along. Handing it to the candidate would stall every writer until the
/// scheduler runs that one thread (a lock convoy: milliseconds when the cores are busy). Waiting
/// threads sleep on a semaphore each (a futex; no spinning).
///
/// **Gathering.** Callers woken at the end of a commit usually write again soon (a service's
/// threads in a loop), but on a busy machine they come back only after the next commit has
/// started, so groups alternate between two halves of the writers and each pays its own flush.
/// A leader therefore first waits, briefly, for the callers inside `write` that are not yet
/// queued (those just woken) — about half its previous commit's duration (bounded 5 µs–1 ms),
/// asleep on a semaphore. When such a wait comes up short (callers that do not come back), the
/// next leaders do not wait at all: 8 of them, doubling up to 256 while waits keep coming up
/// short, back to 8 after one that is met. So writers that do not come back cost at most a
/// fraction of a flush now and then. For the same reason a caller that finds other callers
/// inside does not take the lone-writer path but queues (the first caller back would otherwise
/// commit alone, and the others wait a flush for theirs: groups of 15 and 1). Only commits that sync gather: an unsynced commit takes
/// microseconds, about what waking a caller takes, so waiting would only delay it (measured: a
/// 4-writer p50 of ~13 µs became ~100 µs).
final class WriteQueue: @unchecked Sendable {
    /// At most this many requests per group: bounds the transaction (and the leader's own wait).
    static let maximumGroup = 512
    /// Bounds of a leader's gathering wait (nanoseconds).
    static let gatheringWaitBounds: ClosedRange<UInt64> = 5_000...1_000_000
    /// Leaders that skip gathering after a wait that came up short (doubled per further
    /// shortfall, up to the maximum).
    static let leadersWithoutGatheringAfterShortfall = 8
    static let maximumLeadersWithoutGathering = 256

    private struct State {
        var pending: [WriteRequest] = []
        var isLeading = false
        /// While not zero, the leader sleeps on `gatheringWakeup` until this many requests are
        /// queued: the caller whose request reaches it zeroes it under the lock and posts the
        /// wake-up right after releasing the lock, so zero with a wait in progress means the post
        /// is made or about to be (exactly one post per wait that set it; the semaphore is at zero
        /// outside `gatherCallers`).
        var gatheringTarget = 0
        var leadersLeftWithoutGathering = 0
        var pauseAfterNextShortfall = WriteQueue.leadersWithoutGatheringAfterShortfall
        var lastCommitNanoseconds: UInt64 = 0
    }
    private let state = Mutex(State())
    /// Whether leaders gather (commits sync) — see the type's comment.
    let gathers: Bool
    private let gatheringWakeup = BlockingLock(initiallyAvailable: false)
    /// Callers inside `groupWrite`: queued, leading (the lone fast path too), or woken and not yet
    /// returned. Balanced by a `defer`, so it is exact whenever no caller is inside.
    let callersInside = Atomic<Int>(0)
    /// Gathering waits that ended with every expected caller queued, and those that came up short.
    let gatheringWaitsMet = Atomic<UInt64>(0)
    let gatheringWaitsShort = Atomic<UInt64>(0)
    /// Commits that held more than one request, and requests they held (for tests and benchmarks).
    let groupedCommits = Atomic<UInt64>(0)
    let groupedRequests = Atomic<UInt64>(0)

    init(gathers: Bool = true) {
        self.gathers = gathers
    }

    /// Queues `request`; true if the caller must lead now (nobody was leading).
    func enqueue(_ request: WriteRequest) -> Bool {
        let (leads, reachedTarget) = state.withLock { state in
            state.pending.append(request)
            let reachedTarget = state.gatheringTarget > 0 && state.pending.count >= state.gatheringTarget
            if reachedTarget { state.gatheringTarget = 0 }
            if state.isLeading { return (false, reachedTarget) }
            state.isLeading = true
            return (true, reachedTarget)
        }
        // Posted after the lock is released: the woken leader takes the lock at once, and posting
        // under it let the leader preempt this thread and then wait on the lock this thread still
        // held (perf: `Mutex` lockSlow 5 % of the 16-writer samples; gone posting here).
        if reachedTarget { gatheringWakeup.unlock() }
        return leads
    }

    /// Called by the leader before `takeGroup()`: waits (asleep, at most `timeout`, by default
    /// about half the previous commit's duration) until every caller inside `write` but not yet
    /// queued has queued its request. Returns whether it waited and how many requests are queued.
    @discardableResult
    func gatherCallers(timeout: UInt64? = nil) -> (waited: Bool, queued: Int) {
        guard gathers else { return (false, 0) }
        let expected = min(callersInside.load(ordering: .relaxed), WriteQueue.maximumGroup)
        let (wait, queued): (UInt64?, Int) = state.withLock { state in
            if state.leadersLeftWithoutGathering > 0 {
                state.leadersLeftWithoutGathering -= 1
                return (nil, state.pending.count)
            }
            guard expected > state.pending.count else { return (nil, state.pending.count) }
            state.gatheringTarget = expected
            let half = state.lastCommitNanoseconds / 2
            let wait = timeout ?? min(max(half, WriteQueue.gatheringWaitBounds.lowerBound), WriteQueue.gatheringWaitBounds.upperBound)
            return (wait, state.pending.count)
        }
        guard let wait else { return (false, queued) }
        var met = gatheringWakeup.lock(timeoutNanoseconds: wait)
        var postIsOwed = false
        let queuedNow = state.withLock { state in
            if !met {
                if state.gatheringTarget == 0 {
                    // The target was reached as the wait ended; the caller that reached it posts
                    // right after its lock (see `enqueue`): take that post below, so the
                    // semaphore is back at zero.
                    postIsOwed = true
                    met = true
                } else {
                    state.gatheringTarget = 0
                    state.leadersLeftWithoutGathering = state.pauseAfterNextShortfall
                    state.pauseAfterNextShortfall = min(state.pauseAfterNextShortfall * 2, WriteQueue.maximumLeadersWithoutGathering)
                }
            }
            if met { state.pauseAfterNextShortfall = WriteQueue.leadersWithoutGatheringAfterShortfall }
            return state.pending.count
        }
        // Asleep until the owed post, which is at most a few instructions away (no spinning).
        if postIsOwed { gatheringWakeup.lock() }
        if met {
            gatheringWaitsMet.add(1, ordering: .relaxed)
        } else {
            gatheringWaitsShort.add(1, ordering: .relaxed)
        }
        return (true, queuedNow)
    }

    /// Whether the next leader skips gathering (a recent wait came up short).
    var isGatheringPaused: Bool { state.withLock { $0.leadersLeftWithoutGathering > 0 } }

    /// Whether a leader is waiting for callers to queue (for tests).
    var isGathering: Bool { state.withLock { $0.gatheringTarget > 0 } }

    /// A commit (its `commit()` call: pages, meta, sync) took `nanoseconds`; bounds the next
    /// gathering wait.
    func recordCommitDuration(_ nanoseconds: UInt64) {
        state.withLock { $0.lastCommitNanoseconds = nanoseconds }
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

    /// After a wake-up: true if the caller must lead (its request is not done and nobody leads).
    func takeLeadIfFree(for request: WriteRequest) -> Bool {
        state.withLock { state in
            // A leader marks its group done before it frees the lead, so a request that is not
            // done while nobody leads is still queued.
            if request.isDone || state.isLeading { return false }
            state.isLeading = true
            return true
        }
    }

    /// The next group: the queued requests, oldest first.
    func takeGroup() -> [WriteRequest] {
        state.withLock { state in
            let count = min(state.pending.count, WriteQueue.maximumGroup)
            let group = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
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
        let othersInside = queue.callersInside.add(1, ordering: .relaxed).oldValue > 0
        defer { queue.callersInside.subtract(1, ordering: .relaxed) }
        // With other callers inside (say, woken by the last commit and about to write again),
        // a gathering caller goes through the queue so that its commit can gather theirs.
        if !(othersInside && queue.gathers), queue.leadIfIdle() {
            // Alone: the body runs in a plain transaction on this thread, as without group commit;
            // writes that arrive meanwhile queue and the first of them is woken to lead next.
            defer { if let candidate = queue.releaseLead() { candidate.wake() } }
            let transaction = try beginWrite()
            do {
                transaction.isInsideWriteBody = true
                let result = try body(transaction)
                transaction.isInsideWriteBody = false
                if transaction.isActive { try commitTimed(transaction, queue: queue) }
                return result
            } catch {
                transaction.abort()
                throw error
            }
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

    /// Commits one group (holding `own`), frees the lead, then wakes the group's other callers.
    private func lead(_ queue: WriteQueue, own: WriteRequest) {
        if queue.gathers { queue.gatherCallers() }
        let group = queue.takeGroup()
        commit(group, writer: writer!)
        if let candidate = queue.releaseLead() { candidate.wake() }
        for request in group where request !== own { request.wake() }
    }

    /// Commits `transaction`, telling `queue` how long the commit took (its next gathering wait).
    private func commitTimed(_ transaction: WriteTransaction, queue: WriteQueue) throws {
        guard queue.gathers else { return try transaction.commit() }
        let start = Clock.monotonicNanoseconds()
        try transaction.commit()
        queue.recordCommitDuration(Clock.monotonicNanoseconds() &- start)
    }

    /// Runs the bodies of `group` in one write transaction and commits it. A group of one runs
    /// its body directly in the transaction, as an ungrouped write would.
    private func commit(_ group: [WriteRequest], writer: WriterSession) {
        defer {
            for request in group {
                request.body = nil
                request.markDone()
            }
        }
        let transaction: WriteTransaction
        do {
            transaction = try beginWrite()
        } catch {
            for request in group { request.error = error }
            return
        }
        if group.count == 1 {
            do {
                transaction.isInsideWriteBody = true
                try group[0].body?(transaction)
                transaction.isInsideWriteBody = false
                if transaction.isActive { try commitTimed(transaction, queue: writer.writeQueue) }
            } catch {
                transaction.abort()
                group[0].error = error
            }
            return
        }
        var succeeded: [WriteRequest] = []
        succeeded.reserveCapacity(group.count)
        for request in group {
            do {
                try transaction.nested { try request.body?($0) }
                succeeded.append(request)
            } catch {
                request.error = error
            }
        }
        do {
            try commitTimed(transaction, queue: writer.writeQueue)
            writer.writeQueue.groupedCommits.add(1, ordering: .relaxed)
            writer.writeQueue.groupedRequests.add(UInt64(group.count), ordering: .relaxed)
        } catch {
            transaction.abort()
            for request in succeeded { request.error = error }
        }
    }

    /// Commits that carried more than one write request, and the requests they carried, since this
    /// handle opened (0 for a read-only handle).
    public var groupCommitStatistics: (commits: UInt64, requests: UInt64) {
        guard let writer else { return (0, 0) }
        return (writer.writeQueue.groupedCommits.load(ordering: .relaxed), writer.writeQueue.groupedRequests.load(ordering: .relaxed))
    }
}
