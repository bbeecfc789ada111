/// How the per-process poller watches for commits while an observer is subscribed.
public struct PollingSchedule: Sendable, Equatable {
    /// Interval right after activity.
    public var fastInterval: Double
    /// How long after the last commit the fast interval is kept.
    public var hotWindow: Double
    /// The interval the poller backs off to when the store is idle.
    public var idleInterval: Double
    /// Spin (yielding the CPU between loads) instead of sleeping while hot: lowest latency, one
    /// busy core while commits keep coming.
    public var spinsWhenHot: Bool
    /// Follow a writer that commits at a steady pace: sleep through the quiet part of each period
    /// and be watching closely around the next expected commit (see `CommitCadence`).
    /// Irregular writers get the ordinary schedule either way.
    public var followsCadence: Bool
    /// While following a cadence whose forecast window is narrow (a writer on a steady clock),
    /// spin (yielding) across that window instead of sleeping between polls: the latency loses
    /// one thread wake-up, and the CPU cost is about the window's width per commit.
    public var spinsAroundForecast: Bool

    public init(fastInterval: Double = 50e-6, hotWindow: Double = 0.25, idleInterval: Double = 0.05,
                spinsWhenHot: Bool = false, followsCadence: Bool = true, spinsAroundForecast: Bool = true) {
        self.fastInterval = fastInterval
        self.hotWindow = hotWindow
        self.idleInterval = idleInterval
        self.spinsWhenHot = spinsWhenHot
        self.followsCadence = followsCadence
        self.spinsAroundForecast = spinsAroundForecast
    }

    /// The default: tens of µs latency while commits flow, 20 wake-ups a second when idle.
    public static let standard = PollingSchedule()
    /// Spins while hot: a few µs latency at the cost of a core while commits keep coming.
    public static let lowLatency = PollingSchedule(fastInterval: 0, spinsWhenHot: true)
    /// A quarter of the wake-ups of `.standard` while commits flow, for a few hundred µs latency.
    public static let frugal = PollingSchedule(fastInterval: 200e-6, spinsAroundForecast: false)
}

extension PollingSchedule {
    /// The longest interval or window a schedule may ask for (seconds): the idle interval also
    /// bounds how long the poller takes to notice a new store or its last stream leaving.
    public static let longestInterval = 3600.0

    /// Throws `StrataError.misuse` unless every interval is a number of seconds from 0 to
    /// `longestInterval` and the idle interval is above 0 (a poller that never sleeps when idle
    /// would spin a core): an infinite interval made the poller trap, a negative or NaN one spin.
    func validate() throws {
        for (name, value) in [("fastInterval", fastInterval), ("hotWindow", hotWindow), ("idleInterval", idleInterval)] {
            guard value.isFinite, value >= 0, value <= PollingSchedule.longestInterval else {
                throw StrataError.misuse("PollingSchedule.\(name) is \(value) s; use a number of seconds from 0 to \(Int(PollingSchedule.longestInterval))")
            }
        }
        guard idleInterval > 0 else {
            throw StrataError.misuse("PollingSchedule.idleInterval is 0; an idle poller must sleep (the fast interval may be 0)")
        }
    }

    /// The schedule that serves both: the shorter intervals and the longer hot window, each
    /// eager option if either asks for it, cadence following only if both allow it. Merging is
    /// order-independent, so which subscriber came first never matters.
    func merged(with other: PollingSchedule) -> PollingSchedule {
        var merged = self
        merged.fastInterval = min(fastInterval, other.fastInterval)
        merged.hotWindow = max(hotWindow, other.hotWindow)
        merged.idleInterval = min(idleInterval, other.idleInterval)
        merged.spinsWhenHot = spinsWhenHot || other.spinsWhenHot
        merged.followsCadence = followsCadence && other.followsCadence
        merged.spinsAroundForecast = spinsAroundForecast || other.spinsAroundForecast
        return merged
    }
}
