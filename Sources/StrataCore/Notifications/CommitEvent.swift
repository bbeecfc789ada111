/// One or more commits, as an observer learns of them.
///
/// Events coalesce: an observer that falls behind receives one event for all the commits it
/// missed, with the union of what changed, and `generation` is always the newest one seen. After the last
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
    /// the observer filters by tree). Tracked by their bytes, but a `Set<String>` compares with
    /// `==`: of two changed trees whose names are only canonically equivalent ("\u{212B}" and
    /// "A\u{30A}") it holds one, and `contains` answers true for either name. A change is never
    /// missed; a tree whose equivalent-named neighbour changed may look changed too.
    public let changedTrees: Set<String>

    func merged(with newer: CommitEvent) -> CommitEvent {
        CommitEvent(generation: newer.generation, previousGeneration: previousGeneration,
                    commitTime: newer.commitTime, changedTrees: changedTrees.union(newer.changedTrees))
    }
}
