/// Learns the rhythm of a writer that commits at a steady pace (a timer, a batching loop, a
/// sampler), so a poller can sleep through the quiet part of each period and be polling densely
/// when the next commit is due.
///
/// Why: on a VM every poller wake-up costs about 6 µs of CPU, so polling every 50 µs alone burns
/// ~12 % of a core. A writer committing every millisecond gives ~20 wake-ups per commit; knowing
/// when the next one is due cuts that to a long sleep plus a handful of polls around the forecast,
/// without adding latency. A writer with no steady period gets no forecast, and the poller keeps
/// its ordinary schedule.
///
/// Times are monotonic nanoseconds of this process. They come from the writer's commit stamps
/// (converted from wall-clock time), not from when the poller noticed, so the forecast does not
/// inherit the poller's own quantisation.
struct CommitCadence {
    /// When the next commit is due: the window each remembered commit projects it into, if the
    /// writer kept its period.
    struct Forecast: Equatable {
        let earliest: UInt64
        let latest: UInt64
        let period: UInt64
    }

    /// Commits remembered (eight give seven periods: enough for a median that ignores a hiccup).
    static let remembered = 8
    /// Fewer periods than this give no forecast.
    static let periodsNeeded = 4
    /// Faster writers are cheaper to follow with ordinary fast polling.
    static let shortestPeriod: UInt64 = 200_000
    /// Slower writers are rare enough that the idle back-off handles them.
    static let longestPeriod: UInt64 = 1_000_000_000

    /// Commit times, oldest first, strictly increasing.
    private(set) var commits: [UInt64] = []
    /// The next commit's forecast, or nil while the recent commits keep no steady period. Computed
    /// once per commit (the poller reads it on every wake-up).
    private(set) var forecast: Forecast?

    mutating func recordCommit(at time: UInt64) {
        if let last = commits.last {
            // The same commit seen again, or a clock step backwards: a stamp that does not move
            // forward says nothing about the period. A step backwards starts afresh.
            if time == last { return }
            if time < last { commits.removeAll() }
        }
        commits.append(time)
        if commits.count > CommitCadence.remembered { commits.removeFirst() }
        forecast = CommitCadence.forecast(from: commits)
    }

    /// The forecast `commits` support.
    ///
    /// The period is the median slope over every pair of remembered commits (Theil–Sen), so one
    /// late commit moves it by nothing and the writer's jitter is averaged over long spans. Every
    /// remembered commit projects the next one to `commit + k × period`; the forecast spans those
    /// projections. Projecting from all of them, not just the last, matters for the common
    /// writer that commits on a fixed clock: after one late commit the next is back on the clock,
    /// which older commits predict and the late one does not. The writer counts as steady while
    /// the projections agree within half a period.
    static func forecast(from commits: [UInt64]) -> Forecast? {
        guard commits.count > CommitCadence.periodsNeeded else { return nil }
        var slopes: [UInt64] = []
        slopes.reserveCapacity(commits.count * (commits.count - 1) / 2)
        for later in 1..<commits.count {
            for earlier in 0..<later {
                slopes.append((commits[later] - commits[earlier]) / UInt64(later - earlier))
            }
        }
        slopes.sort()
        let period = slopes[slopes.count / 2]
        guard period >= CommitCadence.shortestPeriod, period <= CommitCadence.longestPeriod else { return nil }
        var earliest = UInt64.max, latest: UInt64 = 0
        for (index, commit) in commits.enumerated() {
            let projection = commit + UInt64(commits.count - index) * period
            earliest = min(earliest, projection)
            latest = max(latest, projection)
        }
        guard latest - earliest <= period / 2 else { return nil }
        return Forecast(earliest: earliest, latest: latest, period: period)
    }
}

extension Database {
    /// When the last commit was stamped, in this process's monotonic clock (`now` is the current
    /// monotonic time). The writer stamps wall-clock time, which processes share; the age of the
    /// stamp carries over to the monotonic clock. A stamp from the future (a clock step) counts
    /// as "just now".
    func lastCommitMonotonicTime(now: UInt64) -> UInt64 {
        let wall = Clock.wallNanoseconds()
        let age = wall &- min(wall, lastCommitTime)
        return now &- min(now, age)
    }
}
