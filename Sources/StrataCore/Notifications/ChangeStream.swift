import Synchronization

/// An `AsyncSequence` of `CommitEvent`s for one store, fed by the process's `ChangeMonitor`.
/// It ends when the iterating task is cancelled, `cancel()` is called, the handle is closed, or
/// the poller cannot read the store's newest commits (damage: `failure` says why); the poller
/// stops when the last stream of the process ends. Iterate a stream from one task at a time (subscribe again for
/// a second observer): an iteration that finds another one already waiting ends at once (nil).
public final class ChangeStream: AsyncSequence, Sendable {
    /// One or more commits: events not yet taken by an iteration are merged into one.
    public typealias Element = CommitEvent

    let database: Database
    /// nil observes every tree. Each is matched by its bytes (`TreeName`): the name as given.
    let trees: Set<String>?
    let identifier: UInt64
    private let state: Mutex<State>

    struct State {
        var pending: CommitEvent?
        var waiter: UnsafeContinuation<CommitEvent?, Never>?
        var finished = false
        var failure: (any Error)?
        /// Generation and per-tree last-modified stamps the next event is computed against.
        var generation: UInt64
        var treeStamps: [TreeName.Key: UInt64]
    }

    init(database: Database, trees: Set<String>?, identifier: UInt64, generation: UInt64, treeStamps: [TreeName.Key: UInt64]) {
        self.database = database
        self.trees = trees
        self.identifier = identifier
        state = Mutex(State(generation: generation, treeStamps: treeStamps))
    }

    /// The generation this stream's view is at (its last delivered or pending event).
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// Why the poller ended this stream, if it did: the error that kept it from reading the
    /// store's newest commits for about a second of tries (for example `StrataError.corruptPage`
    /// for a damaged catalog). nil while the stream runs and after an ordinary end (cancellation,
    /// a closed handle). A full reader table never ends a stream: it waits for a free slot.
    ///
    /// ```swift
    /// for await event in stream { handle(event) }
    /// if let failure = stream.failure { log("stopped watching: \(failure)") }
    /// ```
    public var failure: (any Error)? { state.withLock { $0.failure } }

    /// Ends the stream because its store cannot be read (see `failure`).
    func end(failure: any Error) {
        state.withLock { $0.failure = $0.finished ? $0.failure : failure }
        cancel()
    }

    /// Ends the stream; an iteration waiting for the next event returns nil.
    public func cancel() {
        let waiter = state.withLock { state -> UnsafeContinuation<CommitEvent?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        ChangeMonitor.shared.unsubscribe(identifier: identifier, database: ObjectIdentifier(database))
    }

    deinit {
        ChangeMonitor.shared.unsubscribe(identifier: identifier, database: ObjectIdentifier(database))
    }

    var isFinished: Bool { state.withLock { $0.finished } }
    /// Whether an iteration is suspended waiting for the next event (for tests).
    var hasWaitingIteration: Bool { state.withLock { $0.waiter != nil } }

    /// The stamps a stream observing `trees` (nil: all) remembers from a snapshot's: one lookup
    /// per observed name, not a pass over the whole catalog.
    static func stamps(of trees: Set<String>?, in snapshotStamps: [TreeName.Key: UInt64]) -> [TreeName.Key: UInt64] {
        guard let trees else { return snapshotStamps }
        var own: [TreeName.Key: UInt64] = [:]
        for name in trees { if let stamp = snapshotStamps[TreeName.Key(name)] { own[TreeName.Key(name)] = stamp } }
        return own
    }

    /// Called by the poller for a new snapshot: its generation, commit time and every tree's
    /// last-modifying commit (`PageAccess.treeStamps`).
    func deliver(generation: UInt64, commitTime: UInt64, stamps snapshotStamps: [TreeName.Key: UInt64]) {
        let (previous, oldStamps) = state.withLock { ($0.generation, $0.treeStamps) }
        guard generation > previous else { return }
        // A filtered stream remembers only its own trees: one that does not exist counts as
        // changed when it appears or disappears.
        let stamps = ChangeStream.stamps(of: trees, in: snapshotStamps)
        var changed = Set<String>()
        for (name, stamp) in stamps where oldStamps[name] != stamp { changed.insert(name.name) }
        for name in oldStamps.keys where stamps[name] == nil { changed.insert(name.name) }
        let event = CommitEvent(generation: generation, previousGeneration: previous, commitTime: commitTime, changedTrees: changed)
        let waiter = state.withLock { state -> UnsafeContinuation<CommitEvent?, Never>? in
            state.generation = generation
            state.treeStamps = stamps
            // A filtered observer hears nothing about commits that did not touch its trees.
            if trees != nil && changed.isEmpty { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = state.pending.map { $0.merged(with: event) } ?? event
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Invariant: the continuation is resumed exactly once — at once, or by whichever of
    /// `deliver` and `cancel` takes it out of `state.waiter` under the lock. A stream is iterated
    /// by one task at a time; an iteration that finds another one already waiting ends at once
    /// (nil) rather than displace that one's continuation, which would then never resume.
    private func next() async -> CommitEvent? {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in
                let immediate: CommitEvent?? = state.withLock { state in
                    if let pending = state.pending {
                        state.pending = nil
                        return .some(pending)
                    }
                    if state.finished || Task.isCancelled || state.waiter != nil { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Iterates the stream's events.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: ChangeStream
        /// The next event, waiting for a commit; nil when the stream was cancelled, the task is
        /// cancelled, the handle closed, or another iteration of this stream is already waiting.
        public mutating func next() async -> CommitEvent? { await stream.next() }
    }

    /// An iterator over this stream (iterate from one task at a time).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }
}
