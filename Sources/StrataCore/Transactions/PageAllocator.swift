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
struct PageAllocator {
    var nextPage: UInt64
    let committedPageCount: UInt64
    var freeTree: TreeRecord
    let reuseLimit: UInt64
    /// Pages free to use now, sorted descending so `popLast` hands out the lowest number.
    var reusable: [UInt64] = []
    /// Committed pages this transaction stopped referencing.
    var freed: [UInt64] = []
    var freeTreeExhausted = false
    var isLoadingRecord = false
    /// While the free list is saved at commit, no further records are loaded (that would change
    /// the tree being written), and dirty pages freed go to `freed`, so `reusable` only shrinks.
    var isSavingFreeList = false

    init(nextPage: UInt64, committedPageCount: UInt64, freeTree: TreeRecord, reuseLimit: UInt64) {
        self.nextPage = nextPage
        self.committedPageCount = committedPageCount
        self.freeTree = freeTree
        self.reuseLimit = reuseLimit
    }

    /// Adds `pages` (in any order) to `reusable`, keeping it sorted descending. Records hold
    /// their pages ascending (leftovers) or in the order they were freed, and `reusable` is often
    /// empty when one is loaded: a run already in order is reversed or kept and merged in linear
    /// time; only pages out of order pay a sort.
    mutating func addReusable(_ pages: [UInt64]) {
        var incoming = pages
        if !incoming.isDescending {
            if incoming.isAscending { incoming.reverse() } else { incoming.sort(by: >) }
        }
        mergeReusable(descending: incoming)
    }

    /// Adds the pages `first ..< first + count` to `reusable`, keeping it sorted descending.
    mutating func addReusable(ascendingRun first: UInt64, count: Int) {
        if count == 1, let last = reusable.last, last > first {
            reusable.append(first)
            return
        }
        mergeReusable(descending: (0..<UInt64(count)).reversed().map { first + $0 })
    }

    /// Merges `incoming` (sorted descending) into `reusable` (sorted descending).
    private mutating func mergeReusable(descending incoming: [UInt64]) {
        guard let lowest = reusable.last, let highest = incoming.first else {
            if reusable.isEmpty { reusable = incoming }
            return
        }
        if lowest > highest {
            reusable.append(contentsOf: incoming)
            return
        }
        var merged: [UInt64] = []
        merged.reserveCapacity(reusable.count + incoming.count)
        var left = 0, right = 0
        while left < reusable.count, right < incoming.count {
            if reusable[left] >= incoming[right] {
                merged.append(reusable[left])
                left += 1
            } else {
                merged.append(incoming[right])
                right += 1
            }
        }
        merged.append(contentsOf: reusable[left...])
        merged.append(contentsOf: incoming[right...])
        reusable = merged
    }

    /// Page numbers per free-tree record: small enough to stay inline in a leaf.
    static func chunkCapacity(pageSize: Int) -> Int {
        (PageLayout.maximumNodeSize(pageSize: pageSize) - PageLayout.leafNodeHeader - FreeRecordKey.size - 2) / 8
    }
}

extension WriteTransaction {
    /// Allocates `count` contiguous pages.
    func allocate(pages count: Int = 1) throws -> UInt64 {
        if count == 1 {
            if let page = allocator.reusable.popLast() { return page }
            if !allocator.isSavingFreeList, try loadFreeRecord(), let page = allocator.reusable.popLast() { return page }
        } else if !allocator.isSavingFreeList, let run = takeContiguousRun(count) {
            return run
        }
        let page = allocator.nextPage
        allocator.nextPage += UInt64(count)
        guard allocator.nextPage < 1 << 40 else { throw StrataError.misuse("the store reached the maximum of 2^40 pages") }
        return page
    }

    /// Frees `count` pages starting at `page`.
    func freePages(_ page: UInt64, count: Int = 1) {
        if uninstall(page) {
            // Allocated by this transaction: no snapshot has seen it, reuse at once.
            if allocator.isSavingFreeList {
                for offset in 0..<UInt64(count) { allocator.freed.append(page + offset) }
            } else {
                allocator.addReusable(ascendingRun: page, count: count)
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
        // Read into a local array first: appending to `allocator` page by page pays an exclusivity
        // check per page.
        let committedPageCount = allocator.committedPageCount
        let pages = try value.withUnsafeBytes { raw in
            try (0..<(raw.count / 8)).map { index in
                let page = raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)
                guard page >= PageLayout.metaPageCount, page < committedPageCount else {
                    throw StrataError.corruptPage(page: allocator.freeTree.root, reason: "free list names page \(page) outside the file")
                }
                return page
            }
        }
        allocator.addReusable(pages)
        var record = allocator.freeTree
        _ = try key.withUnsafeBytes { try remove(from: &record, key: $0) }
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
        // Saving copies a path of the free tree, and maybe splits it: have reusable pages ready for
        // that (records cannot be loaded once saving starts), or they would come from the file's end.
        // When this transaction already copied the free tree's root (it loaded a record), the path
        // to the leaf it loaded from is its own, and in a small store that is the last leaf, where
        // records are added: only a split needs pages. Loading one more record just for that would
        // make every small commit take and rewrite the leftover record. When the records above
        // the loaded one span more leaves, the pages this saving copies beyond `wanted` come from
        // the file's end: the file grows a little, nothing is wrong on disk.
        let rootIsOwn = access.dirty[allocator.freeTree.root]?.nestingDepth == nestingDepth
        let wanted = rootIsOwn ? 2 : 2 * (allocator.freeTree.depth + 2)
        while allocator.reusable.count < wanted, try loadFreeRecord() {}
        allocator.isSavingFreeList = true
        let capacity = PageAllocator.chunkCapacity(pageSize: pageSize)
        var recordedFreed = 0
        var recordedReusable: [UInt64]?
        var reusableChunks = 0
        // Leftover pages are reusable now and stay so: recorded just below this transaction's
        // limit, they sort next to its own record at the end of the tree (0 when nothing was
        // reusable: pages this transaction allocated and freed again).
        let leftoverFreedBy = allocator.reuseLimit > 0 ? allocator.reuseLimit - 1 : 0
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
            let leftover = Array(allocator.reusable.reversed()) // ascending: `reusable` is kept descending
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
            return
        }
        throw StrataError.corruptPage(page: allocator.freeTree.root, reason: "the free list did not settle while it was saved")
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

private extension Array where Element == UInt64 {
    var isAscending: Bool { indices.dropFirst().allSatisfy { self[$0 - 1] <= self[$0] } }
    var isDescending: Bool { indices.dropFirst().allSatisfy { self[$0 - 1] >= self[$0] } }
}
