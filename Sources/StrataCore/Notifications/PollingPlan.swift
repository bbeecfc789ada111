import CStrataSystem
import Glibc

/// Decides how long a poller sleeps before its next look at the generation counter.
///
/// Right after a change it polls every `fastInterval` for `hotWindow`; after that it backs off
/// exponentially to `idleInterval`. When the writer commits at a steady pace (`CommitCadence`),
/// it instead sleeps until just before the next commit is due and then spins (yielding) across
/// the forecast window when it is narrow, or polls every quarter `fastInterval` when it is wide;
/// a commit that does not come within the forecast drops it back to the ordinary schedule.
///
/// A first cadence attempt slept until the forecast itself and doubled p50 latency: long
/// nanosleeps on this VM overshoot by 20–40 µs. So the plan measures its own long sleeps and
/// wakes that much (plus one poll interval) before the forecast's earliest time.
struct PollingPlan {
    let schedule: PollingSchedule
    private var lastChange: UInt64
    private var backoff: Double = 0
    private var cadence = CommitCadence()
    /// Average overshoot of the plan's long sleeps (ns), learned as it goes.
    private(set) var sleepOvershoot: UInt64 = 30_000
    /// A forecast spanning at most 1/10 of the period, and at most `longestSpin`, counts as
    /// narrow enough to spin across.
    static let narrowWindowDivisor: UInt64 = 10
    /// The widest window spun across (ns), whatever the period: a slow writer with a large
    /// jitter must not cost a tenth of a core in spinning.
    static let longestSpin: UInt64 = 100_000

    /// A plan starts cold (as if the last change were long ago): it backs off from the fast
    /// interval until it sees a change.
    init(schedule: PollingSchedule, now: UInt64 = Clock.monotonicNanoseconds()) {
        self.schedule = schedule
        lastChange = now &- Clock.nanoseconds(schedule.hotWindow) &- 1
    }

    /// A change was seen at `now`; `commitTime` is when it was committed (monotonic ns), if known.
    mutating func observedChange(at now: UInt64, commitTime: UInt64? = nil) {
        lastChange = now
        backoff = 0
        if let commitTime { cadence.recordCommit(at: commitTime) }
    }

    /// The cadence forecast the plan currently follows, if any.
    var forecast: CommitCadence.Forecast? {
        schedule.followsCadence && !schedule.spinsWhenHot ? cadence.forecast : nil
    }

    /// Seconds to sleep now; 0 means spin (yield) once.
    mutating func nextPause(at now: UInt64) -> Double {
        let since = Double(now &- lastChange)
        let fast = schedule.fastInterval
        if let forecast {
            let poll = Clock.nanoseconds(fast / 4)
            // A steady writer's window is narrow (its jitter): spinning across it costs that
            // width of CPU per commit, plus the error in the learned sleep overshoot, and takes
            // the sleeping thread's wake-up (15–25 µs on this VM) out of the latency. A wide
            // window would cost too much spinning.
            let spins = schedule.spinsAroundForecast
                && forecast.latest - forecast.earliest <= min(forecast.period / PollingPlan.narrowWindowDivisor, PollingPlan.longestSpin)
            // Wake early by the measured overshoot of long sleeps, plus one poll interval when
            // polling (a spinner sees the commit the moment it lands, it needs no such margin).
            let lead = sleepOvershoot + (spins ? 0 : poll)
            let wakeAt = forecast.earliest &- min(forecast.earliest, lead)
            // Capped at the idle interval, so a slow writer's long period never delays the
            // poller's other duties (a new store to watch, the last stream leaving) for longer
            // than idling would.
            if now < wakeAt && wakeAt - now > 2 * poll { return min(Double(wakeAt - now) / 1e9, schedule.idleInterval) }
            if now <= forecast.latest + poll { return spins ? 0 : fast / 4 }
            // Overdue: the writer broke its rhythm; the ordinary schedule takes over.
        }
        if since < schedule.hotWindow * 1e9 {
            return schedule.spinsWhenHot ? 0 : fast
        }
        // Doubling starts from at least 1 µs: a spinning schedule (fast interval 0) would
        // otherwise stay at 0 and spin through idle periods too.
        backoff = min(max(backoff * 2, fast, 1e-6), schedule.idleInterval)
        return backoff
    }

    /// Sleeps for `seconds` (yields the CPU for 0), learning how much sleeps of the length the
    /// cadence uses overshoot.
    mutating func pause(_ seconds: Double) {
        guard seconds > 0, seconds >= 4 * schedule.fastInterval, seconds < 0.01 else {
            PollingPlan.pause(seconds)
            return
        }
        let start = Clock.monotonicNanoseconds()
        PollingPlan.pause(seconds)
        let slept = Clock.monotonicNanoseconds() &- start
        let overshoot = min(slept &- min(slept, Clock.nanoseconds(seconds)), 200_000)
        sleepOvershoot = (sleepOvershoot * 7 + overshoot) / 8
    }

    /// Sleeps for `seconds` (yields the CPU for 0).
    static func pause(_ seconds: Double) {
        guard seconds > 0 else {
            sched_yield()
            return
        }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// The poller sleeps in tens of microseconds: ask the kernel for 1 µs timer slack instead of the
    /// default 50 µs, for this thread only.
    static func tightenTimerSlack() { _ = strata_set_timer_slack(1000) }
}
