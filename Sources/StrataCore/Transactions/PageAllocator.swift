/// Page allocation and the free-page tree.
///
/// The free tree maps `(freedBy u64 BE, writer u64 BE, chunk u32 BE)` to a packed list of u64 page
/// numbers. A page freed by transaction T was reachable from snapshots older than T and not from T
/// or later ones, so it may be reused once `T < reuseLimit`, where
/// `reuseLimit = min(committed generation, oldest live reader snapshot)`. Keeping pages freed by the
/// last committed transaction out of reach (strictly less than the committed generation) means the
/// previous meta's tree also stays intact, so falling back to it after a torn meta is always safe.
/// Pages that were already reusable when they were recorded (left over from a loaded record) are
/// recorded as freed by `reuseLimit - 1` of the transaction that recorded them (older stores used
/// 0): any later transaction may take them, since a reader that could still see them would have had
/// to pin a snapshot before that limit. Records are taken newest first (see `loadFreeRecord`).
///
/// Carried free pages (format 4, `CarriedFreePages`): the meta also lists free pages, in groups
/// keyed by the same `freedBy`, under the same reuse rule. A transaction starts with the carried
/// groups that are reusable in `reusable` (before any free-tree record) and the others in
/// `carriedPending`; at commit, the pages it freed, its leftover reusable pages and the pending
/// groups are carried on in its meta if they fit (`carryFreeList`), and the free tree is not
/// touched. In a steady state of small commits each one reuses the pages freed two commits
/// before, so the list stays a few groups long and the free tree is never rewritten. Only when
/// the list would outgrow `carriedCapacity` (a reader holds an old snapshot, a large commit, a
/// record loaded from the free tree) does the commit record it all in the free tree as before,
/// keeping a reserve of reusable pages in its meta for the next commits. The free pages of a
/// generation are thus its free tree plus its meta's list, and each page is in exactly one.
struct PageAllocator {
    var nextPage: UInt64
    let committedPageCount: UInt64
    var freeTree: TreeRecord
    let reuseLimit: UInt64
    /// The `freedBy` under which pages still reusable at commit are recorded (in the meta or the
    /// free tree): just below the reuse limit, so they stay reusable and sort next to this
    /// transaction's own record; 0 when nothing was reusable (pages this transaction allocated
    /// and freed again). The carry and the spill path must key them alike: both read this.
    var leftoverFreedBy: UInt64 { reuseLimit > 0 ? reuseLimit - 1 : 0 }
    /// Pages free to use now, sorted descending so `popLast` hands out the lowest number.
    /// Any change to it but a removal by `nextSinglePage` forgets `pairFreeThrough`.
    var reusable: [UInt64] = [] {
        didSet { pairFreeThrough = nil }
    }
    /// No two consecutive page numbers in `reusable` are both at or below this page (nil: not
    /// known). `longestRun` learns it and then skips those pages: a small transaction asks for a
    /// run on each of its pages, and where the lowest reusable pages hold none (a store whose
    /// free pages are scattered) each ask scanned the same `runSearchDepth` pages again, a tenth
    /// of a one-put commit's instructions. Handing a page out removes it, which keeps this true
    /// (`removeReusable`); an addition could break it, so every other change forgets it.
    private(set) var pairFreeThrough: UInt64?
    /// Committed pages this transaction stopped referencing.
    var freed: [UInt64] = []
    var freeTreeExhausted = false
    var isLoadingRecord = false
    /// While the free list is saved at commit, no further records are loaded (that would change
    /// the tree being written), and dirty pages freed go to `freed`, so `reusable` only shrinks.
    var isSavingFreeList = false
    /// The page after the last one handed out: the next page that extends the current run.
    var runEnd: UInt64?
    /// Single pages handed out so far by this transaction.
    var pagesHandedOut = 0
    /// Words of free pages this transaction's meta may carry (0: the store's format keeps every
    /// free page in the free tree).
    var carriedCapacity = 0
    /// The base meta's carried groups that are not reusable yet (freed at or after `reuseLimit`).
    var carriedPending = CarriedFreePages()
    /// What this transaction's meta carries, set when its free list is saved.
    var carriedOut = CarriedFreePages()

    init(nextPage: UInt64, committedPageCount: UInt64, freeTree: TreeRecord, reuseLimit: UInt64, carriedCapacity: Int = 0) {
        self.nextPage = nextPage
        self.committedPageCount = committedPageCount
        self.freeTree = freeTree
        self.reuseLimit = reuseLimit
        self.carriedCapacity = carriedCapacity
    }

    /// Takes the base meta's carried groups: the reusable ones into `reusable`, the others into
    /// `carriedPending`. Returns false if a page would be reusable twice (`decodingCarried`
    /// refuses such a list, so only a list built in memory could do that).
    mutating func takeCarried(_ list: CarriedFreePages) -> Bool {
        for group in list.groups {
            if group.freedBy < reuseLimit {
                guard addReusable(group.pages) else { return false }
            } else {
                carriedPending.groups.append(group)
            }
        }
        return true
    }

    /// Adds `pages` to `reusable`, keeping it sorted descending, in time linear in both counts
    /// (a full sort after appending a record of up to `chunkCapacity` pages was a fifth of a small
    /// commit's instructions: leftover records are stored ascending, the opposite of `reusable`,
    /// records of freed pages too, but for the free tree's own pages at the end of the last ones,
    /// and stores written before that in freeing order, which is sorted here). Returns
    /// false if a page is already there or listed twice: the free list named a page twice, and
    /// handing it out twice would give two pages of the tree one place in the file.
    mutating func addReusable(_ pages: [UInt64]) -> Bool {
        guard !pages.isEmpty else { return true }
        var incoming = pages
        if !SortedPages.isStrictlyDescending(incoming) {
            incoming.reverse()
            if !SortedPages.isStrictlyDescending(incoming) {
                incoming.sort(by: >)
                guard SortedPages.isStrictlyDescending(incoming) else { return false }
            }
        }
        guard let lowest = reusable.last, let highest = reusable.first else {
            reusable = incoming
            return true
        }
        if incoming[incoming.count - 1] > highest {
            incoming.append(contentsOf: reusable)
            reusable = incoming
            return true
        }
        if incoming[0] < lowest {
            reusable.append(contentsOf: incoming)
            return true
        }
        var merged: [UInt64] = []
        merged.reserveCapacity(reusable.count + incoming.count)
        var (i, j) = (0, 0)
        while i < reusable.count && j < incoming.count {
            let (a, b) = (reusable[i], incoming[j])
            if a == b { return false }
            if a > b { merged.append(a); i += 1 } else { merged.append(b); j += 1 }
        }
        merged.append(contentsOf: reusable[i...])
        merged.append(contentsOf: incoming[j...])
        reusable = merged
        return true
    }

    /// The policy for single pages. A commit writes each run of consecutive pages in as few calls as
    /// its 16 KiB pieces allow (`PosixFile.writeSpan`), and
    /// a 4 KiB write into a page-cache folio pays a walk of the whole folio, so pages that lie
    /// together are much cheaper to write than scattered ones (measured on a one-put commit of a
    /// store filled at random: six pages took six `pwrite`s, in runs they take three). In order:
    ///
    /// 1. the page that extends the run of the last page handed out (`runEnd`);
    /// 2. past `smallTransactionPages` pages, the lowest reusable page (a large transaction's
    ///    pages are scattered anyway; it does not pay for a search);
    /// 3. the next page at the file's end if the current run is there and `freshBudget` lasts
    ///    (none after a commit of more than `smallTransactionPages` pages: see `allocate`);
    /// 4. the start of the longest run of reusable pages; for the transaction's first page only
    ///    a run of at least `firstRunPages`, else a new run at the file's end while `freshBudget`
    ///    lasts;
    /// 5. the lowest reusable page.
    ///
    /// Returns nil for "take the next page at the file's end" (steps 3 and 4, or nothing
    /// reusable); `usesBudget` says whether that passes over reusable pages. Runs last from
    /// commit to commit: a page written by T is freed by the next commit that copies it and handed
    /// out again, in order, by a later one, so a commit that copies the same pages as an earlier
    /// one (the path to the same leaf, the catalog, the free tree) gets that commit's run back.
    /// The file's end starts such runs when the free list has none to offer; the reusable pages
    /// it passes over stay in the free list for later commits, and the per-session budget bounds
    /// how far that grows the file.
    mutating func nextSinglePage(freshBudget: Int) -> (page: UInt64?, usesBudget: Bool) {
        pagesHandedOut += 1
        if let end = runEnd, let index = PageAllocator.index(of: end, inDescending: reusable) {
            removeReusable(at: index)
            runEnd = end + 1
            return (end, false)
        }
        guard let lowest = reusable.last else { return (nil, false) }
        if pagesHandedOut <= PageAllocator.smallTransactionPages {
            if runEnd == nextPage && freshBudget > 0 { return (nil, true) }
            let run = longestRun()
            let isFirst = runEnd == nil
            if let run, !isFirst || run.length >= PageAllocator.firstRunPages {
                let page = removeReusable(at: run.index)
                runEnd = page + 1
                return (page, false)
            }
            if isFirst && freshBudget > 0 { return (nil, true) }
        }
        removeReusable(at: reusable.count - 1)
        runEnd = lowest + 1
        return (lowest, false)
    }

    /// Removes the page at `index` from `reusable`, keeping `pairFreeThrough` (a removal never
    /// brings two consecutive pages together).
    @discardableResult
    private mutating func removeReusable(at index: Int) -> UInt64 {
        let known = pairFreeThrough
        let page = reusable.remove(at: index)
        pairFreeThrough = known
        return page
    }

    /// The index in `reusable` of the first page of its longest run of at least two pages, and
    /// the run's length (among the lowest `runSearchDepth` pages; the lowest such run among
    /// equals). `reusable` is descending: the page after `reusable[i]` would be at `i - 1`.
    ///
    /// Starts above the pages `pairFreeThrough` knows to hold no pair: scanned, each of them is a
    /// run of one (no run of two starts there) but the highest, whose successor may lie above,
    /// so starting at that one finds what a scan from the lowest page finds. Learns, for the next
    /// call, how far the pages hold no pair: below the first run it finds, or through the last
    /// page it looked at when it finds none.
    private mutating func longestRun() -> (index: Int, length: Int)? {
        let stop = max(0, reusable.count - PageAllocator.runSearchDepth)
        var best: (index: Int, length: Int)?
        var index = reusable.count - 1
        if let known = pairFreeThrough {
            index = min(index, PageAllocator.firstIndex(atOrBelow: known, inDescending: reusable))
        }
        var lowestRunStart: UInt64?
        while index >= stop {
            var length = 1
            while index - length >= stop && reusable[index - length] == reusable[index] + UInt64(length) { length += 1 }
            if length >= 2 {
                if lowestRunStart == nil { lowestRunStart = reusable[index] }
                if length > (best?.length ?? 0) { best = (index, length) }
            }
            index -= length
        }
        // Pages below the lowest run hold no pair (it would have started a lower run); without a
        // run, no page up to the highest one looked at does.
        let learned: UInt64? = if let lowestRunStart { lowestRunStart > 0 ? lowestRunStart - 1 : nil }
            else if stop < reusable.count { reusable[stop] } else { nil }
        if let learned { pairFreeThrough = max(pairFreeThrough ?? learned, learned) }
        return best
    }

    /// The first index of `pages` (descending) whose page is at or below `page`; `pages.count`
    /// if there is none.
    private static func firstIndex(atOrBelow page: UInt64, inDescending pages: [UInt64]) -> Int {
        var (low, high) = (0, pages.count)
        while low < high {
            let middle = (low + high) / 2
            if pages[middle] > page { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// How many of the lowest reusable pages `longestRun` examines.
    static let runSearchDepth = 1024
    /// A transaction's first page comes from a reusable run only this long (else from the file's
    /// end, while the budget lasts): shorter runs would split a small commit's pages anyway.
    static let firstRunPages = 4
    /// Transactions that have handed out at most this many pages look for runs and may take
    /// pages at the file's end: more than a small commit writes (about 6 pages), few enough
    /// that searching for runs stays a small part of the commit.
    static let smallTransactionPages = 16
    /// Pages a writer session may take at the file's end while reusable pages were on hand: a
    /// thirty-second of the store as it is now, at most 256 (1 MiB of 4 KiB pages, about one
    /// step of file growth in `Database.persist`). A store that only sees small commits settles
    /// into runs that come back whole and stops drawing on it; one whose commits keep changing
    /// shape spends it once per session.
    static func freshPageBudget(pageCount: UInt64) -> Int { Int(min(256, pageCount / 32)) }

    private static func index(of page: UInt64, inDescending pages: [UInt64]) -> Int? {
        var (low, high) = (0, pages.count)
        while low < high {
            let middle = (low + high) / 2
            if pages[middle] > page { low = middle + 1 } else { high = middle }
        }
        return low < pages.count && pages[low] == page ? low : nil
    }

    /// Page numbers per free-tree record: small enough to stay inline in a leaf.
    static func chunkCapacity(pageSize: Int) -> Int {
        (PageLayout.maximumNodeSize(pageSize: pageSize) - PageLayout.leafNodeHeader - FreeRecordKey.size - 2) / 8
    }
}

extension WriteTransaction {
    /// Starts the allocator on the base meta's carried free pages (see `PageAllocator`).
    /// - Throws: `StrataError.corruptMeta` if they name a page twice.
    func takeCarriedFreePages() throws {
        guard allocator.takeCarried(base.carried) else {
            throw StrataError.corruptMeta(path: database.path, reason: "generation \(base.transactionID) carries a free page twice")
        }
    }

    /// Allocates `count` contiguous pages.
    func allocate(pages count: Int = 1) throws -> UInt64 {
        if count == 1 {
            if allocator.reusable.isEmpty && !allocator.isSavingFreeList { _ = try loadFreeRecord() }
            let budget = session.lastCommitPages > PageAllocator.smallTransactionPages ? 0
                : PageAllocator.freshPageBudget(pageCount: allocator.committedPageCount) - session.freshPagesTaken
            let (reused, usesBudget) = allocator.nextSinglePage(freshBudget: budget)
            if let reused { return reused }
            if usesBudget { session.freshPagesTaken += 1 }
        } else if !allocator.isSavingFreeList, let run = takeContiguousRun(count) {
            allocator.runEnd = run + UInt64(count)
            return run
        }
        let page = allocator.nextPage
        allocator.nextPage += UInt64(count)
        guard allocator.nextPage < PageLayout.maximumPageCount else { throw StrataError.misuse("the store reached the maximum of 2^40 pages") }
        allocator.runEnd = allocator.nextPage
        return page
    }

    /// Frees `count` pages starting at `page`.
    func freePages(_ page: UInt64, count: Int = 1) {
        if uninstall(page) {
            // Allocated by this transaction: no snapshot has seen it, reuse at once.
            let pages = (0..<UInt64(count)).map { page + $0 }
            if allocator.isSavingFreeList {
                allocator.freed.append(contentsOf: pages)
            } else {
                // Refused only if one of them is reusable already, which a free list naming a
                // live page could cause: leaving them out leaks them, handing them out twice
                // would not be safe.
                _ = allocator.addReusable(pages)
            }
        } else {
            for offset in 0..<UInt64(count) { allocator.freed.append(page + offset) }
        }
    }

    private func takeContiguousRun(_ count: Int) -> UInt64? {
        guard allocator.reusable.count >= count else { return nil }
        let ascending = allocator.reusable.sorted()
        var runStart = 0
        for index in 1..<ascending.count + 1 {
            if index < ascending.count && ascending[index] == ascending[index - 1] + 1 {
                if index - runStart + 1 >= count {
                    let first = ascending[runStart]
                    let taken = Set(first..<first + UInt64(count))
                    allocator.reusable.removeAll { taken.contains($0) }
                    return first
                }
            } else {
                runStart = index
            }
        }
        return nil
    }

    /// Moves the newest reusable free-tree record into `reusable`. Returns false if none qualifies.
    private func loadFreeRecord() throws -> Bool {
        guard !allocator.isLoadingRecord, !allocator.freeTreeExhausted, allocator.freeTree.root != 0 else { return false }
        allocator.isLoadingRecord = true
        defer { allocator.isLoadingRecord = false }
        // The newest record that qualifies: reuse is LIFO, so a commit's free-tree edits (the
        // records it loads, the one it adds, its leftovers) all fall in the tree's last leaf
        // instead of touching both ends, and the pages reused are the recently written ones.
        let cursor = Cursor(access: access, record: allocator.freeTree)
        guard allocator.reuseLimit > 0,
              try cursor.seekLast(atOrBefore: FreeRecordKey(freedBy: allocator.reuseLimit - 1, writer: .max, chunk: .max)) else {
            allocator.freeTreeExhausted = true
            return false
        }
        let key = try cursor.key().bytes
        let freedBy = try key.withUnsafeBytes { try FreeRecordKey.freedBy(of: $0, in: allocator.freeTree) }
        guard freedBy < allocator.reuseLimit else {
            allocator.freeTreeExhausted = true
            return false
        }
        let value = try cursor.value()
        guard value.count > 0, value.count % 8 == 0 else {
            throw StrataError.corruptPage(page: allocator.freeTree.root, reason: "free-tree record of \(value.count) bytes")
        }
        // Read into a local array first, last page first: leftover records are written
        // ascending and `reusable` is kept descending, so this order merges them without
        // reversing (records of freed pages are ascending too, but for the free tree's own late
        // pages in the last records, and older stores' come in freeing order: `addReusable`
        // sorts those).
        let committedPageCount = allocator.committedPageCount
        let pages = try value.withUnsafeBytes { raw in
            let count = raw.count / 8
            return try [UInt64](unsafeUninitializedCapacity: count) { buffer, initialized in
                for index in 0..<count {
                    let page = raw.loadUnaligned(fromByteOffset: (count - 1 - index) * 8, as: UInt64.self)
                    guard page >= PageLayout.metaPageCount, page < committedPageCount else {
                        throw StrataError.corruptPage(page: allocator.freeTree.root, reason: "free list names page \(page) outside the file")
                    }
                    // Handed out already: the free lists name it twice (two records, or a record
                    // and the meta's carried pages).
                    guard access.dirty[page] == nil else {
                        throw StrataError.corruptPage(page: allocator.freeTree.root, reason: "the free list names page \(page) twice")
                    }
                    buffer[index] = page
                    initialized = index + 1
                }
            }
        }
        guard allocator.addReusable(pages) else {
            throw StrataError.corruptPage(page: allocator.freeTree.root, reason: "the free list names a page twice")
        }
        var record = allocator.freeTree
        // The cursor found the key in this very tree: no second look before removing it, but the
        // entry removed must be the record just loaded. `value` stays valid for the comparison:
        // it is made before the leaf changes, and copying a page for the removal leaves the
        // bytes it copied from in place (the mapping, or a buffer kept for an outer level).
        _ = try key.withUnsafeBytes { key in
            try value.withUnsafeBytes { try remove(from: &record, key: key, knownValue: $0) }
        }
        allocator.freeTree = record
        return true
    }

    /// Records the pages this transaction freed and the reusable pages it did not use. Runs last
    /// in commit, after every other tree is final.
    ///
    /// Writing these records changes the free tree itself: copying its pages frees them (`freed`
    /// grows) and needs new pages, which come from `reusable` (so it shrinks) — otherwise every
    /// commit would take its free-tree pages from the end of the file and the file would grow
    /// without bound. The loop rewrites whichever list changed until neither does. It ends: `freed`
    /// grows only when a clean free-tree page is copied (once per page), and `reusable` only shrinks.
    func saveFreeList() throws {
        if try carryFreeList() { return }
        // Saving copies a path of the free tree, and maybe splits it: have reusable pages ready for
        // that (records cannot be loaded once saving starts), or they would come from the file's end.
        // When this transaction already copied the free tree's root (it loaded a record), the path
        // to the leaf it loaded from is its own, and in a small store that is the last leaf, where
        // records are added: only a split needs pages. Loading one more record just for that would
        // make every small commit take and rewrite the leftover record. When the records above
        // the loaded one span more leaves, the pages this saving copies beyond `wanted` come from
        // the file's end: the file grows a little, nothing is wrong on disk.
        // When the whole path to the last leaf is already its own, this commit's record (freed by
        // this transaction, so its key sorts last) goes there without copying anything: loading a
        // record only to cover a rare split took, removed and re-added a leftover record on every
        // small commit (~9k of a typed update's ~151k instructions). A split then takes its pages
        // at the file's end, which is always safe; the free list stays exact either way.
        let rootIsOwn = access.dirty[allocator.freeTree.root]?.nestingDepth == nestingDepth
        let wanted = try ownsFreeTreeTail() ? 0 : rootIsOwn ? 2 : 2 * (allocator.freeTree.depth + 2)
        while allocator.reusable.count < wanted, try loadFreeRecord() {}
        allocator.isSavingFreeList = true
        // The free list outgrew the meta (or the format carries none): the pending carried groups
        // go into the free tree too, and a reserve of reusable pages stays in the meta, so the
        // next small commits take their pages there without loading (and rewriting) a record.
        try checkPendingUnused()
        // Leftover pages are reusable now and stay so (`PageAllocator.leftoverFreedBy`).
        let leftoverFreedBy = allocator.leftoverFreedBy
        // At reuse limit 0 a pending group can be freed by 0 too (leftovers of an earlier
        // transaction at limit 0): its records would have the leftover records' keys, and one
        // would overwrite the other. It goes into the leftover records instead (never handed out
        // here: it is not in `reusable`).
        var pendingInLeftover: [UInt64] = []
        for group in allocator.carriedPending.groups {
            if group.freedBy == leftoverFreedBy {
                pendingInLeftover = group.pages
                continue
            }
            try putFreeRecords(freedBy: group.freedBy, pages: group.pages)
        }
        let reserveCount = min(allocator.carriedCapacity / 2 - 1, allocator.reusable.count - 2 * (allocator.freeTree.depth + 2))
        let reserve = reserveCount > 0 ? Array(allocator.reusable.suffix(reserveCount)) : []
        allocator.reusable.removeLast(reserve.count)
        // The pages this transaction freed are recorded ascending: a page freed twice (only a
        // damaged or forged file does that, see `checkFreedOnce`) sits next to its copy, and a
        // record read back last page first is already in `reusable`'s descending order.
        allocator.freed.sort()
        let sortedFreed = allocator.freed.count
        let capacity = PageAllocator.chunkCapacity(pageSize: pageSize)
        var recordedFreed = 0
        var recordedReusable: [UInt64]?
        var reusableChunks = 0
        for _ in 0..<10_000 {
            if allocator.freed.count != recordedFreed {
                let total = allocator.freed.count
                // Chunks before `recordedFreed / capacity` are complete and unchanged.
                for chunk in stride(from: (recordedFreed / capacity) * capacity, to: total, by: capacity) {
                    let slice = Array(allocator.freed[chunk..<min(total, chunk + capacity)])
                    try putFreeRecord(key: FreeRecordKey(freedBy: transactionID, writer: transactionID, chunk: UInt32(chunk / capacity)), pages: slice)
                }
                recordedFreed = total
                continue
            }
            var leftover = Array(allocator.reusable.reversed()) // ascending: `reusable` is kept descending
            if !pendingInLeftover.isEmpty { leftover = (leftover + pendingInLeftover).sorted() }
            if leftover != recordedReusable ?? [] || recordedReusable == nil {
                let chunks = (leftover.count + capacity - 1) / capacity
                for chunk in 0..<chunks {
                    let slice = Array(leftover[(chunk * capacity)..<min(leftover.count, (chunk + 1) * capacity)])
                    try putFreeRecord(key: FreeRecordKey(freedBy: leftoverFreedBy, writer: transactionID, chunk: UInt32(chunk)), pages: slice)
                }
                for stale in chunks..<max(chunks, reusableChunks) {
                    try deleteFreeRecord(key: FreeRecordKey(freedBy: leftoverFreedBy, writer: transactionID, chunk: UInt32(stale)))
                }
                reusableChunks = chunks
                recordedReusable = leftover
                continue
            }
            try checkFreedOnce(sortedCount: sortedFreed)
            allocator.carriedOut = CarriedFreePages()
            allocator.carriedOut.insert(freedBy: leftoverFreedBy, pages: reserve)
            return
        }
        throw StrataError.corruptPage(page: allocator.freeTree.root, reason: "the free list did not settle while it was saved")
    }

    /// Carries the pages this transaction freed, its leftover reusable pages and the pending
    /// carried groups in its meta (`allocator.carriedOut`) if they fit its capacity; returns
    /// false if not (the free tree then records them). The free tree is not touched here.
    private func carryFreeList() throws -> Bool {
        guard allocator.carriedCapacity > 0 else { return false }
        allocator.freed.sort()
        // The reuse limit is at most the committed generation, so this transaction's own
        // `freedBy` is above every other; leftovers (below the limit) and pending groups (from
        // it) differ too, except at limit 0, where both are 0: `insert` merges them. Inserted in
        // ascending `freedBy`, each group is appended or merged into the last (no group moves).
        var list = CarriedFreePages()
        list.groups.reserveCapacity(allocator.carriedPending.groups.count + 2)
        list.insert(freedBy: allocator.leftoverFreedBy, pages: allocator.reusable)
        for group in allocator.carriedPending.groups { list.insert(freedBy: group.freedBy, pages: group.pages) }
        list.insert(freedBy: transactionID, pages: allocator.freed)
        guard list.wordCount <= allocator.carriedCapacity else { return false }
        try checkFreedOnce(sortedCount: allocator.freed.count)
        try checkPendingUnused()
        // A page in two of the groups (a forged file: a live page listed free, then freed by the
        // copy of it) would be handed out twice once both groups are reusable.
        if let repeated = list.repeatedPage {
            throw StrataError.corruptPage(page: repeated, reason: "the free lists name this page twice (a tree and the carried free pages)")
        }
        allocator.carriedOut = list
        return true
    }

    /// The carried groups not yet reusable name no page this transaction has handed out: only a
    /// forged file lists a page both there and in the free tree (or as reusable twice).
    private func checkPendingUnused() throws {
        for group in allocator.carriedPending.groups {
            for page in group.pages where access.dirty[page] != nil {
                throw StrataError.corruptPage(page: page, reason: "the free lists name this page twice (the free tree and the carried free pages)")
            }
        }
    }

    /// Records `pages` freed by `freedBy` in the free tree, in records of at most `chunkCapacity`
    /// pages under this transaction as writer.
    private func putFreeRecords(freedBy: UInt64, pages: [UInt64]) throws {
        let capacity = PageAllocator.chunkCapacity(pageSize: pageSize)
        for chunk in stride(from: 0, to: pages.count, by: capacity) {
            try putFreeRecord(key: FreeRecordKey(freedBy: freedBy, writer: transactionID, chunk: UInt32(chunk / capacity)),
                              pages: Array(pages[chunk..<min(pages.count, chunk + capacity)]))
        }
    }

    /// Before the free list is written: every page this transaction freed is listed once. Only a
    /// damaged or forged file frees a page twice (trees that name one page twice: each copy of
    /// it frees the original); a free list naming it twice fails every later load of that record,
    /// so no commit could follow, or, when the copies fall in different records, hands the page
    /// out twice. `freed[..<sortedCount]` is sorted; the pages after it, freed while the free
    /// list was saved (its own copied pages), are few.
    private func checkFreedOnce(sortedCount: Int) throws {
        let freed = allocator.freed
        func repeated(_ page: UInt64) -> StrataError {
            StrataError.corruptPage(page: page, reason: "the trees name this page twice (this commit freed it twice)")
        }
        if let page = SortedPages.firstRepeat(inAscending: freed[..<sortedCount]) { throw repeated(page) }
        guard freed.count > sortedCount else { return }
        let late = freed[sortedCount...].sorted()
        let lateRepeat = SortedPages.firstRepeat(inAscending: late[...])
        for page in late {
            if page == lateRepeat { throw repeated(page) }
            // Binary search of the sorted part.
            var (low, high) = (0, sortedCount)
            while low < high {
                let middle = (low + high) / 2
                if freed[middle] < page { low = middle + 1 } else { high = middle }
            }
            if low < sortedCount, freed[low] == page { throw repeated(page) }
        }
    }

    /// Whether every page from the free tree's root down its last children to its last leaf is a
    /// copy this transaction (at its current nesting depth) already owns.
    private func ownsFreeTreeTail() throws -> Bool {
        var number = allocator.freeTree.root
        guard number != 0 else { return false }
        for _ in 0..<allocator.freeTree.depth {
            guard let buffer = access.dirty[number], buffer.nestingDepth == nestingDepth else { return false }
            let page = try buffer.page()
            if page.isLeaf { return true }
            guard page.count > 0 else { return false }
            number = try page.child(page.count - 1)
        }
        return false
    }

    private func deleteFreeRecord(key: FreeRecordKey) throws {
        var record = allocator.freeTree
        defer { allocator.freeTree = record }
        _ = try key.withBytes { try remove(from: &record, key: $0) }
        record.lastModified = transactionID
    }

    private func putFreeRecord(key: FreeRecordKey, pages: [UInt64]) throws {
        var record = allocator.freeTree
        defer { allocator.freeTree = record }
        try pages.withUnsafeBytes { value in
            _ = try key.withBytes { try insert(into: &record, key: $0, value: value, mode: .upsert) }
        }
        record.lastModified = transactionID
    }
}
