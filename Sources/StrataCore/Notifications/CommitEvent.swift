/// One or more commits, as an observer learns of them.
///
/// Events coalesce: an observer that falls behind receives one event for every commit it missed,
/// with the union of what changed, and `generation` is always the newest one seen. After the last
/// event, reading the store at (or after) `generation` shows everything the events described.
public struct CommitEvent: Sendable, Equatable {
    /// The generation the observer's view is now at.
    public let generation: UInt64
    /// The generation the observer's view was at before this event: its previous event, its
    /// subscription, or (for a filtered observer) a later commit that changed none of its trees.
    public let previousGeneration: UInt64
    /// When `generation` was committed (ns since 1970, the writer's clock).
    public let commitTime: UInt64
    /// Trees created, modified or dropped since `previousGeneration` (only the observed ones when
    /// the observer filters by tree).
    public let changedTrees: Set<String>

    func merged(with newer: CommitEvent) -> CommitEvent {
        CommitEvent(generation: newer.generation, previousGeneration: previousGeneration,
                    commitTime: newer.commitTime, changedTrees: changedTrees.union(newer.changedTrees))
    }
}

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
