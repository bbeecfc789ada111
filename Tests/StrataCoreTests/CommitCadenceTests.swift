import Foundation
import Testing
@testable import StrataCore
import StrataTestFixtures

/// The poller's schedule, driven with synthetic times (no sleeping, no clocks): a writer on a
/// steady clock is followed (one long sleep, then short polls around the forecast), anything
/// else gets the ordinary schedule.
@Suite struct CommitCadenceTests {
    static let millisecond: UInt64 = 1_000_000
    static let start: UInt64 = 1_000_000_000_000

    /// Commits on a 1 ms clock, each late by a seeded jitter of up to `jitter` ns.
    static func clockedCommits(_ count: Int, jitter: UInt64, seed: UInt64) -> [UInt64] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { start + UInt64($0) * millisecond + UInt64.random(in: 0...jitter, using: &generator) }
    }

    @Test func aSteadyWriterGetsAForecastThatHoldsItsNextCommit() throws {
        let seed = testSeed("steadyWriterForecast")
        let commits = Self.clockedCommits(40, jitter: 40_000, seed: seed)
        var cadence = CommitCadence()
        for (index, commit) in commits.enumerated().dropLast() {
            cadence.recordCommit(at: commit)
            guard index >= CommitCadence.periodsNeeded else {
                #expect(cadence.forecast == nil, "seed \(seed)")
                continue
            }
            let forecast = try #require(cadence.forecast, "seed \(seed), commit \(index)")
            #expect(forecast.period > 900_000 && forecast.period < 1_100_000, "seed \(seed)")
            // The next commit lies in the forecast, give or take the jitter and the period
            // estimate's own error (a few µs: a seed put the earliest edge 912 ns past
            // jitter alone).
            let slack: UInt64 = 40_000 + 5_000
            #expect(forecast.earliest <= commits[index + 1] + slack, "seed \(seed), commit \(index)")
            #expect(forecast.latest + slack >= commits[index + 1], "seed \(seed), commit \(index)")
            #expect(forecast.latest - forecast.earliest <= 100_000, "seed \(seed), commit \(index)")
        }
    }

    @Test func oneLateCommitDoesNotMoveTheForecastOffTheClock() throws {
        var cadence = CommitCadence()
        for index in 0..<8 { cadence.recordCommit(at: Self.start + UInt64(index) * Self.millisecond) }
        cadence.recordCommit(at: Self.start + 8 * Self.millisecond + 300_000)  // 300 µs late
        let forecast = try #require(cadence.forecast)
        #expect(forecast.period == Self.millisecond)
        // The next commit, back on the clock at 9 ms, is inside the forecast.
        #expect(forecast.earliest <= Self.start + 9 * Self.millisecond)
        #expect(forecast.latest >= Self.start + 9 * Self.millisecond)
    }

    @Test func anIrregularWriterGetsNoForecast() {
        let seed = testSeed("irregularWriter")
        var generator = SeededGenerator(seed: seed)
        var cadence = CommitCadence()
        var time = Self.start
        // Short and long gaps alternate, so no stretch of commits keeps a period by chance (uniform
        // gaps of 0.1–5 ms did for some seeds: eight of them can happen to line up within half a
        // period, which is what a steady writer is).
        for step in 0..<20 {
            let gap = step % 2 == 0 ? UInt64.random(in: 200_000...600_000, using: &generator)
                                    : UInt64.random(in: 3_000_000...5_000_000, using: &generator)
            time += gap
            cadence.recordCommit(at: time)
        }
        #expect(cadence.forecast == nil, "seed \(seed)")
    }

    @Test func tooFastOrRepeatedOrBackwardStampsGiveNoForecast() {
        var fast = CommitCadence()
        for index in 0..<8 { fast.recordCommit(at: Self.start + UInt64(index) * 50_000) }
        #expect(fast.forecast == nil)

        var repeated = CommitCadence()
        for index in 0..<8 {
            repeated.recordCommit(at: Self.start + UInt64(index) * Self.millisecond)
            repeated.recordCommit(at: Self.start + UInt64(index) * Self.millisecond)
        }
        #expect(repeated.commits.count == 8)
        #expect(repeated.forecast != nil)

        repeated.recordCommit(at: Self.start)  // the clock stepped back: start afresh
        #expect(repeated.commits == [Self.start])
        #expect(repeated.forecast == nil)
    }

    /// A plan that has followed `commits` (each seen 5 µs after its stamp), and the time just
    /// after the last one was seen.
    static func planFollowing(_ commits: [UInt64], schedule: PollingSchedule) -> (PollingPlan, UInt64) {
        var plan = PollingPlan(schedule: schedule, now: start)
        for commit in commits { plan.observedChange(at: commit + 5_000, commitTime: commit) }
        return (plan, commits.last! + 5_000)
    }

    @Test func thePlanSleepsThroughTheQuietPartOfAPeriodAndPollsAroundAWideForecast() throws {
        // Commits alternately 0 and 180 µs late: a window wider than a tenth of the period, too
        // costly to spin across, so the plan polls through it.
        let commits = (0..<8).map { Self.start + UInt64($0) * Self.millisecond + ($0 % 2 == 0 ? 0 : 180_000) }
        var (plan, now) = Self.planFollowing(commits, schedule: .standard)
        let forecast = try #require(plan.forecast)
        #expect(forecast.latest - forecast.earliest > forecast.period / PollingPlan.narrowWindowDivisor)
        // Right after a commit: one long sleep, ending before the forecast (woken early by the
        // expected sleep overshoot and one poll interval).
        let pause = plan.nextPause(at: now)
        #expect(pause > 0.0005)
        let wake = now + Clock.nanoseconds(pause)
        #expect(wake < forecast.earliest)
        #expect(wake + plan.sleepOvershoot + 20_000 >= forecast.earliest)
        // Around the forecast: polls at a quarter of the fast interval.
        #expect(plan.nextPause(at: forecast.earliest) == PollingSchedule.standard.fastInterval / 4)
        #expect(plan.nextPause(at: forecast.latest) == PollingSchedule.standard.fastInterval / 4)
        // Overdue: back to the ordinary fast interval (the last change is recent).
        now = forecast.latest + 100_000
        #expect(plan.nextPause(at: now) == PollingSchedule.standard.fastInterval)
    }

    @Test func aNarrowForecastIsSpunAcrossAndNothingElseIs() throws {
        let seed = testSeed("narrowForecastSpin")
        let commits = Self.clockedCommits(8, jitter: 20_000, seed: seed)
        var (plan, now) = Self.planFollowing(commits, schedule: .standard)
        let forecast = try #require(plan.forecast, "seed \(seed)")
        #expect(forecast.latest - forecast.earliest <= forecast.period / PollingPlan.narrowWindowDivisor, "seed \(seed)")
        // The long sleep ends the expected overshoot before the window, without the poll margin.
        let wake = now + Clock.nanoseconds(plan.nextPause(at: now))
        #expect(wake + plan.sleepOvershoot <= forecast.earliest + 1_000, "seed \(seed)")
        #expect(wake + plan.sleepOvershoot + 5_000 >= forecast.earliest, "seed \(seed)")
        // Inside the window: spin (pause 0); past it: the ordinary fast interval, never a spin.
        #expect(plan.nextPause(at: forecast.earliest) == 0, "seed \(seed)")
        #expect(plan.nextPause(at: forecast.latest) == 0, "seed \(seed)")
        now = forecast.latest + 100_000
        #expect(plan.nextPause(at: now) == PollingSchedule.standard.fastInterval, "seed \(seed)")

        // A schedule that asks not to spin polls the same narrow window instead.
        var polling = Self.planFollowing(commits, schedule: .frugal).0
        let pollingForecast = try #require(polling.forecast, "seed \(seed)")
        #expect(polling.nextPause(at: pollingForecast.earliest) == PollingSchedule.frugal.fastInterval / 4)
    }

    /// A slow writer with a large jitter can have a window under a tenth of its period that is
    /// still far too wide to spin across: it is polled instead.
    @Test func aSlowJitteryWritersWindowIsPolledNotSpun() throws {
        let period: UInt64 = 500 * Self.millisecond
        let commits = (0..<8).map { Self.start + UInt64($0) * period + ($0 % 2 == 0 ? 0 : 20 * Self.millisecond) }
        var plan = Self.planFollowing(commits, schedule: .standard).0
        let forecast = try #require(plan.forecast)
        #expect(forecast.latest - forecast.earliest <= forecast.period / PollingPlan.narrowWindowDivisor)
        #expect(forecast.latest - forecast.earliest > PollingPlan.longestSpin)
        #expect(plan.nextPause(at: forecast.earliest) == PollingSchedule.standard.fastInterval / 4)
    }

    /// The poller serves every subscriber of a store with one schedule; which one subscribed
    /// first must not decide it.
    @Test(arguments: [PollingSchedule.frugal, .lowLatency, PollingSchedule(spinsAroundForecast: false), PollingSchedule(followsCadence: false)])
    func mergingSchedulesDoesNotDependOnOrder(other: PollingSchedule) {
        #expect(PollingSchedule.standard.merged(with: other) == other.merged(with: .standard))
        let merged = PollingSchedule.standard.merged(with: other)
        #expect(merged.fastInterval == min(PollingSchedule.standard.fastInterval, other.fastInterval))
        #expect(merged.spinsAroundForecast == (PollingSchedule.standard.spinsAroundForecast || other.spinsAroundForecast))
    }

    @Test func aSlowWritersForecastNeverSleepsLongerThanIdling() throws {
        var plan = PollingPlan(schedule: .standard, now: Self.start)
        let period = 500 * Self.millisecond
        for index in 0..<8 {
            let time = Self.start + UInt64(index) * period
            plan.observedChange(at: time + 5_000, commitTime: time)
        }
        _ = try #require(plan.forecast)
        #expect(plan.nextPause(at: Self.start + 7 * period + 10_000) == PollingSchedule.standard.idleInterval)
    }

    @Test func aPlanThatDoesNotFollowCadencesKeepsItsOrdinarySchedule() {
        var schedule = PollingSchedule.standard
        schedule.followsCadence = false
        var plan = PollingPlan(schedule: schedule, now: Self.start)
        for index in 0..<8 {
            let time = Self.start + UInt64(index) * Self.millisecond
            plan.observedChange(at: time + 5_000, commitTime: time)
        }
        #expect(plan.forecast == nil)
        #expect(plan.nextPause(at: Self.start + 7 * Self.millisecond + 10_000) == schedule.fastInterval)
    }

    /// Every schedule, the spinning one included, backs off to its idle interval once the hot
    /// window has passed without a commit (a spinning poller must not burn a core while idle).
    @Test(arguments: [PollingSchedule.standard, .lowLatency, .frugal])
    func anIdlePlanBacksOffToTheIdleInterval(schedule: PollingSchedule) {
        var plan = PollingPlan(schedule: schedule, now: Self.start)
        plan.observedChange(at: Self.start)
        var now = Self.start + Clock.nanoseconds(schedule.hotWindow) + 1
        var pause = 0.0
        for _ in 0..<64 {
            pause = plan.nextPause(at: now)
            now += max(Clock.nanoseconds(pause), 1)
        }
        #expect(pause == schedule.idleInterval)
    }
}
