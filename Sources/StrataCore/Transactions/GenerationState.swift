import Synchronization

/// One committed generation as its readers see it: the validated meta and the catalog entries
/// looked up so far. Immutable but for the catalog entries, which are appended without a lock, so
/// a reader that holds the instance of the generation it registered reads both with plain loads.
///
/// Why it may be shared and reused: a generation names one committed meta, never rewritten while a
/// registered reader reads it (see `SnapshotCache`), and the catalog pages it names are pinned by
/// that registration: every entry equals what decoding those pages again would produce.
final class GenerationState: Sendable {
    /// A catalog entry of the generation, in an append-only list (one `storeIfNil` per link).
    final class CachedTree: Sendable {
        let name: String
        /// nil: the generation has no tree of that name.
        let record: TreeRecord?
        let next = AtomicLazyReference<CachedTree>()

        init(name: String, record: TreeRecord?) {
            self.name = name
            self.record = record
        }
    }

    /// A handful of trees is the common case; beyond this, lookups are not cached.
    static let treeLimit = 32

    let meta: MetaPage
    private let firstTree = AtomicLazyReference<CachedTree>()

    var generation: UInt64 { meta.transactionID }

    init(meta: MetaPage) { self.meta = meta }

    /// The cached catalog entry `name`, if a reader of this generation looked it up already.
    @inline(__always)
    func cachedTree(named name: String) -> CachedTree? {
        var node = firstTree.load()
        while let current = node {
            if current.name == name { return current }
            node = current.next.load()
        }
        return nil
    }

    /// The catalog entry `name` (nil: no such tree), looked up through `access` (which must read
    /// this generation) unless a reader of the generation already did.
    @inline(__always)
    func tree(named name: String, access: PageAccess) throws -> TreeRecord? {
        if let cached = cachedTree(named: name) { return cached.record }
        let record = try access.catalogEntry(named: name, in: meta.catalog)
        remember(CachedTree(name: name, record: record))
        return record
    }

    /// Appends `entry` at the end of the list unless its name is there already or the list is full.
    /// Racing appenders each retry on the link the other one filled.
    private func remember(_ entry: CachedTree) {
        var last: CachedTree?
        for _ in 0..<GenerationState.treeLimit {
            let stored = last.map { $0.next.storeIfNil(entry) } ?? firstTree.storeIfNil(entry)
            if stored === entry || stored.name == entry.name { return }
            last = stored
        }
    }
}
