/// The catalog entries a writer session knows for one committed generation, so that a write
/// transaction opens the trees the previous one used without looking them up in the catalog
/// again (~1.3k instructions per tree and transaction: a service writing one record per
/// transaction opens the same few trees every time).
///
/// Where the entries come from: lookups of write transactions built on that generation, and a
/// commit, which knows the entry of every tree it opened in the generation it creates (a tree it
/// changed has the record it wrote into the catalog, one it only read the unchanged one, one it
/// dropped or renamed away none).
///
/// Why it is safe: the entries are keyed by the generation and by that generation's catalog
/// record (its root page, counts and stamps), as the committed meta names them. A transaction
/// asks only while its catalog is still the committed one it began from; a generation names one
/// committed meta (see `SnapshotCache`), so equal keys mean the same catalog and the same entries.
/// (No other process commits while this session writes: a writable handle holds the writer lock
/// until it closes, and a closed handle writes nothing. The key would still refuse such a
/// commit's catalog.) A failed or empty commit adopts nothing: the next transaction begins from
/// the same base and finds that base's entries, which are still true. Any other key finds nothing
/// and looks the entry up in the catalog as before. Touched only under the writer session's lock,
/// by the thread running its transaction.
///
/// What it gives up: a transaction that opens its trees from memory does not read the committed
/// catalog leaf again, so damage to that leaf after it was committed is not met there (readers
/// validate it; `check()` verifies it), as with `LastCommitPages`.
struct WriterCatalogMemory {
    /// More trees than this in one generation are not remembered (the list is searched in order).
    static let treeLimit = 32

    private var generation: UInt64 = 0
    private var catalog = TreeRecord()
    private var isValid = false
    /// Tree name -> its catalog entry (nil: the generation has no tree of that name).
    private var entries: [(name: String, record: TreeRecord?)] = []
    /// Entries served from memory (for tests).
    var hits = 0

    /// The remembered entry `name` of the generation whose catalog is `catalog`: `.some(nil)`
    /// if it has no such tree, nil if nothing is remembered.
    func record(named name: String, generation: UInt64, catalog: TreeRecord) -> TreeRecord?? {
        guard isValid, generation == self.generation, catalog == self.catalog else { return nil }
        for entry in entries where TreeName.same(entry.name, name) { return .some(entry.record) }
        return nil
    }

    /// Remembers the entry `name` read from the catalog of `generation` (forgetting entries of
    /// any other generation).
    mutating func remember(_ record: TreeRecord?, named name: String, generation: UInt64, catalog: TreeRecord) {
        if !isValid || generation != self.generation || catalog != self.catalog {
            start(generation: generation, catalog: catalog)
        }
        guard entries.count < Self.treeLimit, !entries.contains(where: { TreeName.same($0.name, name) }) else { return }
        entries.append((name, record))
    }

    /// Moves the memory on to the generation a commit created (whose catalog record is
    /// `catalog`) from the one it began from (`base`, `baseCatalog`): the trees the commit opened
    /// get the entries it committed, the others keep the ones remembered for `base`, which the
    /// commit did not change (every change to the catalog goes through an opened tree). Names in
    /// `trees` are unique (a tree created again reuses its dropped slot); should one repeat, the
    /// last state would win.
    mutating func adopt(_ trees: [Transaction.TreeState], generation: UInt64, catalog: TreeRecord,
                        base: UInt64, baseCatalog: TreeRecord) {
        if isValid && self.generation == base && self.catalog == baseCatalog {
            // Updated in place: no copy of the list per commit.
            self.generation = generation
            self.catalog = catalog
        } else {
            start(generation: generation, catalog: catalog)
        }
        // The last state of each name wins: states are applied in order, each overwriting.
        for state in trees {
            let record = state.isDropped ? nil : state.record
            if let index = entries.firstIndex(where: { TreeName.same($0.name, state.name) }) {
                entries[index].record = record
            } else if entries.count < Self.treeLimit {
                entries.append((state.name, record))
            }
        }
    }

    private mutating func start(generation: UInt64, catalog: TreeRecord) {
        self.generation = generation
        self.catalog = catalog
        isValid = true
        entries.removeAll(keepingCapacity: true)
    }
}

extension WriteTransaction {
    /// The committed catalog entry `name` of the generation this transaction began from: from
    /// the session's memory when it knows it, else looked up (and then remembered).
    func committedCatalogRecord(named name: String) throws -> TreeRecord? {
        if let known = session.catalogMemory.record(named: name, generation: generation, catalog: catalog) {
            session.catalogMemory.hits &+= 1
            return known
        }
        let record = try access.catalogEntry(named: name, in: catalog)
        session.catalogMemory.remember(record, named: name, generation: generation, catalog: catalog)
        return record
    }

    /// After a commit that published `transactionID`: its trees' entries become the memory of
    /// the new generation. (Called from `finish()`, so after every commit, and after aborts,
    /// which leave the memory alone.)
    func rememberCommittedCatalog() {
        guard session.committed.transactionID == transactionID else { return }
        session.catalogMemory.adopt(trees, generation: transactionID, catalog: session.committed.catalog,
                                    base: base.transactionID, baseCatalog: base.catalog)
    }
}
