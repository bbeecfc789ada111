/// Waits for commits on the calling thread (for synchronous code; async code uses `changes()`).
/// It keeps its polling plan between calls, so a loop of waits stays on the fast schedule while
/// commits keep coming.
/// Use one waiter per thread.
public final class CommitWaiter {
    private let database: Database
    private var plan: PollingPlan

    init(database: Database, schedule: PollingSchedule) {
        self.database = database
        plan = PollingPlan(schedule: schedule)
        PollingPlan.tightenTimerSlack()
    }

    /// Blocks until the generation moves past `generation` and returns the new one, or nil after
    /// `timeout` seconds. Polls the shared counter: no futex, signal or file descriptor.
    public func wait(after generation: UInt64, timeout: Double? = nil) -> UInt64? {
        let deadline = timeout.map { Clock.monotonicNanoseconds() &+ Clock.nanoseconds($0) }
        while true {
            let current = database.generation
            let now = Clock.monotonicNanoseconds()
            if current != generation {
                plan.observedChange(at: now, commitTime: database.lastCommitMonotonicTime(now: now))
                return current
            }
            if let deadline, now >= deadline { return nil }
            var pause = plan.nextPause(at: now)
            if let deadline { pause = min(pause, Double(deadline - now) / 1e9) }
            plan.pause(pause)
        }
    }
}

extension Database {
    /// A waiter that blocks the calling thread until commits happen (see `CommitWaiter`).
    public func commitWaiter(schedule: PollingSchedule = .standard) -> CommitWaiter {
        CommitWaiter(database: self, schedule: schedule)
    }
}
