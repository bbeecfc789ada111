/// A commit found when the store was opened that the store did not open at: its meta's fixed part
/// was on disk but not every page it names, or the rest of the meta (its page list or carried
/// free pages), was intact (`Database.skippedCommit`).
///
/// After a crash or power loss this is the commit that was in flight: its single sync had not
/// returned, so it was never acknowledged, and opening at the commit before it loses nothing that
/// was promised. The page checks cannot tell that case from a page damaged on the disk after the
/// sync returned (a bad sector, a lying disk); this report is how either becomes visible instead of
/// silent. `strata stat` prints it.
public struct SkippedCommit: Sendable, Equatable, CustomStringConvertible {
    /// The generation the skipped meta names.
    public let generation: UInt64
    /// What failed: the first page that was missing, out of place or damaged, or the part of the
    /// meta past its fixed part (its page list or carried free pages) that did not verify.
    public let reason: String

    public var description: String {
        "generation \(generation) was skipped at open (its pages or its meta were not all intact: \(reason)); the store opened at the commit before it"
    }
}
