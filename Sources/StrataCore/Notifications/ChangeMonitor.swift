import Glibc
import Synchronization

/// The one poller of this process. It watches the generation counter of every store that has a
/// subscribed `ChangeStream` (one atomic load per store per tick, no syscall, no futex, no signal)
/// and turns a change into events for that store's streams.
///
/// Schedule (`PollingPlan`): right after a change it polls every `fastInterval` for `hotWindow`,
/// then backs off exponentially to `idleInterval`; a writer with a steady rhythm is followed
/// instead, waking just before each commit is due. It runs on its own thread (never the cooperative pool), starts
/// with the first subscription and exits when the last stream ends.
public final class ChangeMonitor: @unchecked Sendable {
    public static let shared = ChangeMonitor()

    /// Streams are held weakly: a stream nobody iterates any more goes away with its iterator,
    /// and its subscription with it (deinit unsubscribes).
    private struct WeakStream {
        weak var stream: ChangeStream?
        let identifier: UInt64
    }

    private struct Watched {
        let database: Database
        /// The generation every stream of this store has been brought up to.
        var generation: UInt64
        var streams: [WeakStream]
        var schedule: PollingSchedule
        /// Counts subscriptions. A delivery advances `generation` only if no stream subscribed
        /// while it ran: a stream it did not deliver to would otherwise be left behind the
        /// generation it skipped, and hear nothing until the next commit.
        var subscriptions: UInt64 = 0
        /// Deliveries in a row that failed with an error other than a full reader table, and when
        /// the first of them failed (reset by a success).
        var failedDeliveries = 0
        var firstFailure: UInt64 = 0
    }

    /// An error other than a full reader table ends the store's streams once deliveries have
    /// failed with it this many times in a row over at least `failingTimeBeforeEnding`: damage
    /// stays, while a failure that passes (a file being replaced, a remapping that failed once)
    /// gets a second (a hot poller retries every 50 µs, so a count alone would be microseconds).
    static let failuresBeforeEnding = 3
    static let failingTimeBeforeEnding: UInt64 = 1_000_000_000

    private struct State {
        var watched: [ObjectIdentifier: Watched] = [:] {
            didSet { schedule = State.combinedSchedule(of: watched) }
        }
        var isRunning = false
        var wakeCount: UInt64 = 0
        /// Test seam: run once by the next delivery to this store, after it has taken its list of
        /// streams and before it reads the snapshot (where a subscription can race it).
        var afterTakingStreams: (store: ObjectIdentifier, body: @Sendable () -> Void)?
        /// The schedule the poller follows, kept up to date with `watched` (not rebuilt per tick).
        private(set) var schedule = PollingSchedule.standard

        /// The most eager subscriber sets the pace.
        static func combinedSchedule(of watched: [ObjectIdentifier: Watched]) -> PollingSchedule {
            watched.values.reduce(nil) { combined, watched in combined?.merged(with: watched.schedule) ?? watched.schedule } ?? .standard
        }
    }

    private let state = Mutex(State())
    private static let serials = Atomic<UInt64>(1)

    /// Whether the poller thread is running (it runs exactly while some stream is subscribed).
    public var isRunning: Bool { state.withLock { $0.isRunning } }
    /// Streams subscribed in this process.
    public var subscriberCount: Int { state.withLock { $0.watched.values.reduce(0) { $0 + $1.streams.count } } }

    /// Whether any stream of this process observes `database`.
    public func isWatching(_ database: Database) -> Bool { state.withLock { $0.watched[ObjectIdentifier(database)] != nil } }
    /// Poller loop turns so far, wake-ups and spins alike (to observe its schedule in tests and
    /// benchmarks).
    public var wakeCount: UInt64 { state.withLock { $0.wakeCount } }

    func subscribe(_ database: Database, trees: Set<String>?, schedule: PollingSchedule) throws -> ChangeStream {
        // The stream starts from the current snapshot: only later commits produce events.
        let (generation, stamps) = try database.withSnapshot { snapshot -> (UInt64, [TreeName.Key: UInt64]) in
            (snapshot.generation, ChangeStream.stamps(of: trees, in: try snapshot.treeStamps()))
        }
        let stream = ChangeStream(database: database, trees: trees, identifier: ChangeMonitor.serials.add(1, ordering: .relaxed).newValue,
                                  generation: generation, treeStamps: stamps)
        let mustStart = state.withLock { state -> Bool in
            let key = ObjectIdentifier(database)
            if state.watched[key] == nil {
                state.watched[key] = Watched(database: database, generation: generation, streams: [], schedule: schedule)
            }
            state.watched[key]!.streams.append(WeakStream(stream: stream, identifier: stream.identifier))
            state.watched[key]!.generation = min(state.watched[key]!.generation, generation)
            state.watched[key]!.subscriptions += 1
            state.watched[key]!.schedule = state.watched[key]!.schedule.merged(with: schedule)
            defer { state.isRunning = true }
            return !state.isRunning
        }
        if mustStart { startThread() }
        return stream
    }

    /// Ends every stream of `database` (it is being closed).
    func endStreams(of database: Database) {
        let streams = state.withLock { $0.watched[ObjectIdentifier(database)]?.streams.compactMap(\.stream) ?? [] }
        for stream in streams { stream.cancel() }
    }

    func unsubscribe(identifier: UInt64, database: ObjectIdentifier) {
        state.withLock { state in
            state.watched[database]?.streams.removeAll { $0.identifier == identifier }
            if state.watched[database]?.streams.isEmpty == true { state.watched[database] = nil }
        }
    }

    private func startThread() {
        let context = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let monitor = Unmanaged<ChangeMonitor>.fromOpaque(context!).takeRetainedValue()
            monitor.run()
            return nil
        }, context)
        if result == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<ChangeMonitor>.fromOpaque(context).release()
            state.withLock { $0.isRunning = false }
        }
    }

    private func run() {
        PollingPlan.tightenTimerSlack()
        var plan: PollingPlan?
        while true {
            // Per tick: one atomic load per watched store, under the lock; nothing is allocated
            // unless a store moved.
            let tick: (changed: [(Database, UInt64)], schedule: PollingSchedule)? = state.withLock { state in
                state.wakeCount += 1
                if state.watched.isEmpty {
                    state.isRunning = false
                    return nil
                }
                var changed: [(Database, UInt64)] = []
                for watched in state.watched.values where watched.database.generation != watched.generation {
                    changed.append((watched.database, watched.generation))
                }
                return (changed, state.schedule)
            }
            guard let tick else { return }
            if plan?.schedule != tick.schedule { plan = PollingPlan(schedule: tick.schedule) }
            var commitTime: UInt64?
            for (database, seen) in tick.changed {
                // Only a delivered change makes the poller hot: a store whose snapshot cannot be
                // read (a full reader table, damage) would otherwise keep it polling every fast
                // interval forever. Its generation stays unseen, so it is retried at the
                // backed-off pace instead.
                guard deliver(database, seen: seen) else { continue }
                // With several stores the stamps interleave; their cadences then rarely agree,
                // and the plan falls back to its ordinary schedule by itself.
                commitTime = database.lastCommitMonotonicTime(now: Clock.monotonicNanoseconds())
            }
            let now = Clock.monotonicNanoseconds()
            if let commitTime { plan!.observedChange(at: now, commitTime: commitTime) }
            plan!.pause(plan!.nextPause(at: now))
        }
    }

    /// Runs `body` once, in the next delivery to `database`, between taking the list of streams
    /// and reading the snapshot (tests use it to subscribe or commit in that window).
    func runOnceDuringNextDelivery(to database: Database, _ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.afterTakingStreams = (ObjectIdentifier(database), body) }
    }

    /// Computes and hands out the events for one store's streams from one new snapshot. Returns
    /// false if the snapshot could not be read (the streams heard nothing).
    private func deliver(_ database: Database, seen: UInt64) -> Bool {
        let key = ObjectIdentifier(database)
        let (streams, subscriptions, seam) = state.withLock { state in
            let seam = state.afterTakingStreams?.store == key ? state.afterTakingStreams?.body : nil
            if seam != nil { state.afterTakingStreams = nil }
            return (state.watched[key]?.streams.compactMap(\.stream) ?? [], state.watched[key]?.subscriptions ?? 0, seam)
        }
        seam?()
        do {
            // A snapshot, not a read transaction: the catalog walk is all the delivery reads, and
            // the stamps it returns stay valid after the snapshot ends.
            let (generation, commitTime, stamps) = try database.withSnapshot { snapshot in
                (snapshot.generation, snapshot.commitTime, try snapshot.treeStamps())
            }
            for stream in streams { stream.deliver(generation: generation, commitTime: commitTime, stamps: stamps) }
            // A stream that subscribed meanwhile got nothing from this delivery: leave the watched
            // generation where it was, so the next tick delivers again and reaches that stream
            // too (delivery is idempotent for the others).
            state.withLock { state in
                guard let watched = state.watched[key] else { return }
                state.watched[key]!.failedDeliveries = 0
                state.watched[key]!.firstFailure = 0
                guard watched.generation == seen, watched.subscriptions == subscriptions else { return }
                state.watched[key]!.generation = generation
            }
            return true
        } catch {
            // A closed store ends its streams. A full reader table is retried on later ticks
            // (the generation stays unseen) for as long as it lasts: readers leave. Anything else
            // (a damaged catalog) ends the streams with the error once it has lasted (see
            // `failuresBeforeEnding`), rather than leave them waiting for an event that never comes.
            if database.isClosed {
                for stream in streams { stream.cancel() }
                return false
            }
            if case StrataError.readerTableFull = error { return false }
            let now = Clock.monotonicNanoseconds()
            let ends = state.withLock { state -> Bool in
                guard state.watched[key] != nil else { return false }
                if state.watched[key]!.failedDeliveries == 0 { state.watched[key]!.firstFailure = now }
                state.watched[key]!.failedDeliveries += 1
                return state.watched[key]!.failedDeliveries >= ChangeMonitor.failuresBeforeEnding
                    && now &- state.watched[key]!.firstFailure >= ChangeMonitor.failingTimeBeforeEnding
            }
            if ends { for stream in streams { stream.end(failure: error) } }
            return false
        }
    }
}

extension Database {
    /// Commits to this store from any process (this one included), as they happen. `trees`
    /// restricts events to commits that changed one of those trees, each the tree of exactly
    /// that name (its UTF-8 bytes, as the catalog names trees; a `Set` holds only one of two
    /// canonically equivalent names, such as "\u{212B}" and "A\u{30A}": observe all trees, or
    /// subscribe twice, to hear both). Throws `StrataError.misuse`
    /// for a schedule with an interval that is negative, not finite, above
    /// `PollingSchedule.longestInterval`, or an idle interval of 0.
    public func changes(trees: Set<String>? = nil, schedule: PollingSchedule = .standard) throws -> ChangeStream {
        try checkOpen()
        try schedule.validate()
        return try ChangeMonitor.shared.subscribe(self, trees: trees, schedule: schedule)
    }
}
