import Synchronization

/// What every read transaction of the newest generation would otherwise recompute: the validated
/// meta and the catalog entries looked up so far. One per `Database` handle.
///
/// Why it is safe to reuse: a generation names one committed meta, written before the generation
/// was published and never rewritten while it is the published one (commit N writes meta page
/// N % 2, so meta N is only overwritten by commit N + 2, after N + 1 was published). A reader uses
/// an entry only for the generation it has registered in its slot and re-checked, so the pages the
/// entry was derived from are pinned and unchanged: the entry equals what decoding them again
/// (checksum, bounds, catalog lookup) would produce. An entry of another generation is replaced.
final class SnapshotCache: Sendable {
    struct CachedTree {
        let name: String
        /// nil: the generation has no tree of that name.
        let record: TreeRecord?
    }

    private struct Entry {
        var meta: MetaPage
        var trees: [CachedTree] = []
    }

    /// A handful of trees is the common case; beyond this, lookups are not cached (linear search).
    private static let treeLimit = 32

    private let entry = Mutex<Entry?>(nil)

    init() {}

    /// The validated meta of `generation`, if it is the cached one.
    func meta(generation: UInt64) -> MetaPage? {
        entry.withLock { entry in
            guard let entry, entry.meta.transactionID == generation else { return nil }
            return entry.meta
        }
    }

    /// Remembers a meta that decoded and validated, replacing an older generation's entry.
    func remember(_ meta: MetaPage) {
        entry.withLock { entry in
            if let current = entry, current.meta.transactionID >= meta.transactionID { return }
            entry = Entry(meta: meta)
        }
    }

    /// The catalog entry `name` of `generation`, if cached.
    func tree(named name: String, generation: UInt64) -> CachedTree? {
        entry.withLock { entry in
            guard let entry, entry.meta.transactionID == generation else { return nil }
            return entry.trees.first { $0.name == name }
        }
    }

    /// The catalog entry `name` of committed `generation` (nil: no such tree), looked up in
    /// `catalog` through `access` unless an earlier reader of the generation already did.
    /// The one catalog look-up of every read path (`ReadTransaction`, `ReadSnapshot`).
    func tree(named name: String, generation: UInt64, catalog: TreeRecord, access: PageAccess) throws -> TreeRecord? {
        if let cached = tree(named: name, generation: generation) { return cached.record }
        let record = try access.catalogEntry(named: name, in: catalog)
        remember(tree: record, named: name, generation: generation)
        return record
    }

    /// Remembers a validated catalog lookup of `generation` (ignored if that is not the cached one).
    func remember(tree record: TreeRecord?, named name: String, generation: UInt64) {
        entry.withLock { entry in
            guard entry?.meta.transactionID == generation, let count = entry?.trees.count, count < SnapshotCache.treeLimit,
                  entry?.trees.contains(where: { $0.name == name }) == false else { return }
            entry?.trees.append(CachedTree(name: name, record: record))
        }
    }
}
