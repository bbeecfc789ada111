import Synchronization

/// The newest generation's `GenerationState`, shared by every read of one `Database` handle, so
/// a generation's meta is decoded and its catalog entries looked up once, not once per read.
///
/// Why it is safe to reuse: a generation names one committed meta, written before the generation
/// was published and never rewritten while it is the published one (commit N writes meta page
/// N % 2, so meta N is only overwritten by commit N + 2, after N + 1 was published). A reader uses
/// a state only for the generation it has registered in its slot and re-checked, so the pages the
/// state was derived from are pinned and unchanged: the state equals what decoding them again
/// (checksum, bounds, catalog lookup) would produce. A state of another generation is replaced.
///
/// Readers that keep the state of the generation they last read (`SnapshotReader`) come here only
/// when the generation moved; the lock is taken once per generation and reader, not per read.
final class SnapshotCache: Sendable {
    private let newest = Mutex<GenerationState?>(nil)

    init() {}

    /// The state of `generation`, if it is the cached one.
    func state(generation: UInt64) -> GenerationState? {
        newest.withLock { newest in newest?.generation == generation ? newest : nil }
    }

    /// Remembers the state of a meta that decoded and validated, unless a newer one is cached.
    /// Returns the cached state of that generation (another reader's, if it was first).
    func remember(_ meta: MetaPage) -> GenerationState {
        newest.withLock { newest in
            if let current = newest, current.generation >= meta.transactionID {
                if current.generation == meta.transactionID { return current }
                return GenerationState(meta: meta)
            }
            let state = GenerationState(meta: meta)
            newest = state
            return state
        }
    }

    /// The catalog entry `name` of committed `generation` (nil: no such tree), looked up in
    /// `catalog` through `access` unless an earlier reader of the generation already did.
    /// The catalog look-up of `ReadTransaction` (`ReadSnapshot` asks its `GenerationState`).
    func tree(named name: String, generation: UInt64, catalog: TreeRecord, access: PageAccess) throws -> TreeRecord? {
        if let state = state(generation: generation) { return try state.tree(named: name, access: access) }
        return try access.catalogEntry(named: name, in: catalog)
    }
}
