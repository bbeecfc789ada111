import Synchronization

/// One committed generation as its readers see it: the validated meta and the catalog entries
/// looked up so far. Immutable but for the catalog entries, which are appended without a lock, so
/// a reader that holds the instance of the generation it registered reads both with plain loads.
///
/// Why it may be shared and reused: a generation names one committed meta, never rewritten while a
/// registered reader reads it (see `SnapshotCache`), and the catalog pages it names are pinned by
/// that registration: every entry equals what decoding those pages again would produce.
final class GenerationState: @unchecked Sendable {
    /// A catalog entry of the generation, in an append-only list. A node owns its successor (one
    /// retain, stored once by compare-exchange, released in deinit); the state owns the first.
    /// (`AtomicLazyReference` would say the same, but its generic `load` is not inlined: it cost
    /// a metadata look-up per read.) Unsafe code stays in this type.
    final class CachedTree: @unchecked Sendable {
        let name: String
        /// nil: the generation has no tree of that name.
        let record: TreeRecord?
        fileprivate let next = Atomic<Unmanaged<CachedTree>?>(nil)

        init(name: String, record: TreeRecord?) {
            self.name = name
            self.record = record
        }

        deinit { next.load(ordering: .acquiring)?.release() }
    }

    /// A handful of trees is the common case; beyond this, lookups are not cached.
    static let treeLimit = 32

    let meta: MetaPage
    private let firstTree = Atomic<Unmanaged<CachedTree>?>(nil)

    var generation: UInt64 { meta.transactionID }

    init(meta: MetaPage) { self.meta = meta }

    deinit { firstTree.load(ordering: .acquiring)?.release() }

    /// The cached catalog entry `name` (`.some(nil)`: the generation has no such tree), or nil if
    /// no reader of this generation looked it up yet.
    @inline(__always)
    func cachedRecord(named name: String) -> TreeRecord?? {
        // Nodes live as long as the state (each is owned by its predecessor), so following the
        // links without retaining is safe while `self` is alive.
        var node = firstTree.load(ordering: .acquiring)
        while let current = node {
            let found: TreeRecord?? = current._withUnsafeGuaranteedRef { TreeName.same($0.name, name) ? .some($0.record) : nil }
            if let found { return found }
            node = current._withUnsafeGuaranteedRef { $0.next.load(ordering: .acquiring) }
        }
        return nil
    }


    /// The catalog entry `name` (nil: no such tree), looked up through `access` (which must read
    /// this generation) unless a reader of the generation already did.
    @inline(__always)
    func tree(named name: String, access: PageAccess) throws -> TreeRecord? {
        if let cached = cachedRecord(named: name) { return cached }
        let record = try access.catalogEntry(named: name, in: meta.catalog)
        remember(CachedTree(name: name, record: record))
        return record
    }

    /// Appends `entry` at the end of the list unless its name is there already or the list is full.
    /// Racing appenders each retry on the link the other one filled.
    private func remember(_ entry: CachedTree) {
        let retained = Unmanaged.passRetained(entry)
        var link = firstTree.load(ordering: .acquiring)
        var last: Unmanaged<CachedTree>?
        for _ in 0..<GenerationState.treeLimit {
            if let current = link {
                if current._withUnsafeGuaranteedRef({ TreeName.same($0.name, entry.name) }) { break }
                last = current
                link = current._withUnsafeGuaranteedRef { $0.next.load(ordering: .acquiring) }
                continue
            }
            let (exchanged, found) = last.map { $0._withUnsafeGuaranteedRef { $0.next.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing) } }
                ?? firstTree.compareExchange(expected: nil, desired: retained, ordering: .acquiringAndReleasing)
            if exchanged { return }
            link = found
        }
        retained.release()
    }
}
