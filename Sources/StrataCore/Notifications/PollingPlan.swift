import CStrataSystem
import Glibc

/// Decides how long a poller sleeps before its next look at the generation counter.
///
/// Right after a change it polls every `fastInterval`; when commits arrive at a steady pace it also
/// learns their typical gap and sleeps through most of it, waking just before the next commit is
/// due (so a 1 kHz committer costs a few wake-ups per commit, not twenty). After `hotWindow` with no
/// change it backs off exponentially to `idleInterval`.
struct PollingPlan {
    let schedule: PollingSchedule
    private var lastChange: UInt64
    /// Exponentially weighted mean gap between observed changes (ns); 0 until learned.
    private var typicalGap: Double = 0
    private var backoff: Double = 0

    init(schedule: PollingSchedule, now: UInt64 = Clock.monotonicNanoseconds()) {
        self.schedule = schedule
        lastChange = now
    }

    mutating func observedChange(at now: UInt64) {
        let gap = Double(now &- lastChange)
        typicalGap = typicalGap == 0 ? gap : typicalGap * 0.8 + gap * 0.2
        lastChange = now
        backoff = 0
    }

    /// Seconds to sleep now; 0 means spin (yield) once.
    mutating func nextPause(at now: UInt64) -> Double {
        let since = Double(now &- lastChange)
        let fast = schedule.fastInterval
        if since < schedule.hotWindow * 1e9 {
            if schedule.spinsWhenHot { return 0 }
            // Steady committer: sleep until 75% of the usual gap has passed, then poll fast.
            let wakeAt = typicalGap * 0.75
            if typicalGap > 8 * fast * 1e9 && since < wakeAt {
                return min((wakeAt - since) / 1e9, schedule.idleInterval)
            }
            return fast
        }
        backoff = min(max(backoff * 2, fast), schedule.idleInterval)
        return backoff
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

extension Database {
    /// Blocks the calling thread until the generation moves past `generation` (a commit from any
    /// process) and returns the new one, or nil after `timeout` seconds. It polls the shared
    /// counter on the adaptive `schedule`; no futex, signal or file descriptor is involved. For
    /// async code use `changes()`.
    public func waitForCommit(after generation: UInt64, timeout: Double? = nil, schedule: PollingSchedule = .standard) -> UInt64? {
        PollingPlan.tightenTimerSlack()
        var plan = PollingPlan(schedule: schedule)
        let deadline = timeout.map { Clock.monotonicNanoseconds() + UInt64($0 * 1e9) }
        while true {
            let current = self.generation
            if current != generation { return current }
            let now = Clock.monotonicNanoseconds()
            if let deadline, now >= deadline { return nil }
            PollingPlan.pause(plan.nextPause(at: now))
        }
    }
}
