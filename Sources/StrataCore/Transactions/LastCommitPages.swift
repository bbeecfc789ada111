/// The tree pages the writer's last commit wrote, kept in memory for the next transactions.
///
/// Copy-on-write copies a committed page before changing it, and a page read from the file is
/// checked whole first (`Page.validateHeap`: the file is never trusted). Small commits copy mostly
/// the pages the commit before wrote (the path to the same leaf, the catalog, the free tree), and
/// those the writer built itself in memory: copying them from its own buffer skips both the
/// validation and the read of the mapping.
///
/// The table holds exactly the single-page tree buffers of the session's last commit, so each
/// holds the committed content of its page: a commit replaces the table (or empties it, when it
/// wrote more than `lastCommitCapacity` pages), and a transaction that aborts or fails to commit leaves the
/// committed state, and with it the table, as it was. The branch pages of earlier commits stay
/// in a second table while their numbers are not written again (`builtBranch`). Buffers in either
/// table are never in a dirty table and never recycled while they are there, so nothing writes
/// to them.
extension Database.WriterSession {
    /// At most this many bytes of pages are kept in each of the two tables (1,024 pages of 4 KiB;
    /// the last commit's pages and earlier commits' branches: up to 8 MiB together): what a commit of a
    /// hundred scattered changes writes (a leaf and most of a path each) fits, so the next such
    /// transaction copies the upper branches and the leaves they share from memory, skipping the
    /// validation of pages that hold the most nodes. Kept with 32 pages, a transaction of 100
    /// entity updates validated 1.78 pages per update, with 1,024 1.26 (callgrind, 2026-11-25).
    static let lastCommitByteCapacity = 4 << 20
    /// At most this many pages are kept (never fewer than 32, what a small commit writes).
    var lastCommitCapacity: Int { max(32, Database.WriterSession.lastCommitByteCapacity / committed.pageSize) }

    /// After a successful commit: keeps the commit's buffers (the transaction's table itself
    /// becomes the kept one, no buffer moves) if there are few enough, and recycles the previous
    /// commit's. `dirty` is left empty.
    func keepLastCommit(_ dirty: inout DirtyPages) {
        let capacity = lastCommitCapacity
        // A page this commit wrote no longer holds what an older copy of it holds. (By number:
        // the table's keys are one dense array, the buffers scattered objects that a commit of
        // hundreds of pages has long pushed out of the cache.)
        if !builtBranches.isEmpty {
            dirty.forEachNumber { number in
                if let stale = builtBranches.removeValue(forKey: number) { recycle(stale) }
            }
        }
        // The previous commit's branch pages stay trusted (see `builtBranch`); the rest is
        // recycled. Which of them are branches was noted when they were kept: asking each
        // buffer's page here cost a cache miss per page, a tenth of a large commit's
        // bookkeeping. (A buffer in the table is never written, so its kind is still the one noted.)
        for number in lastCommitBranches where builtBranches.count < capacity && dirty[number] == nil {
            if let branch = lastCommit.removeValue(forKey: number) { builtBranches[number] = branch }
        }
        lastCommitBranches.removeAll(keepingCapacity: true)
        lastCommit.drainTaking { buffer in recycleTreePage(buffer) }
        guard dirty.count <= capacity else { return }
        // The emptied table's storage becomes the transaction's (emptied) table.
        swap(&lastCommit, &dirty)
        // Only single-page tree pages stay (overflow runs and other pages are rare): they go
        // back to the transaction's table, which recycles them when it ends.
        var passed: [PageBuffer] = []
        lastCommit.forEach { buffer in
            guard buffer.pageCount == 1, let kind = buffer.kind, kind == .branch || kind == .leaf else {
                passed.append(buffer)
                return
            }
            if kind == .branch { lastCommitBranches.append(buffer.number) }
        }
        for buffer in passed {
            lastCommit.removeValue(forKey: buffer.number)
            dirty[buffer.number] = buffer
        }
    }

    /// The buffer the last commit wrote for page `number`, if it is a tree page it kept.
    @inline(__always)
    func lastCommitBuffer(_ number: UInt64) -> PageBuffer? { lastCommit[number] }

    /// The branch page `number` as an earlier commit of this session wrote it, if kept: removed
    /// from the table (a transaction copies a page to change it, so the committed one is about
    /// to be freed); the caller copies it and hands it to `recycle`.
    ///
    /// Why: a transaction of scattered changes copies most branch pages above the leaves (with
    /// 100,000 entities, a third of the pages a transaction of 100 updates copies), each holding
    /// a few hundred nodes that the heap check of a page read from the file walks. The branches
    /// a commit wrote are kept when the next commit replaces it (up to `lastCommitCapacity`), as
    /// long as no later commit writes their page numbers: a page's committed content changes
    /// only when a commit writes it, and every commit evicts the numbers it wrote. A page freed
    /// since (its copy is in a newer commit) may stay until its number is written again: no
    /// committed tree points at it, so it is never asked for, but it holds a place in the table
    /// (bounded by `lastCommitCapacity`; entries are admitted only while there is room), so such
    /// dead entries can crowd out live ones until their numbers are reused. Evicting them when a
    /// commit frees them would need the commit's freed list here: measured gain first.
    @inline(__always)
    func builtBranch(_ number: UInt64) -> PageBuffer? {
        builtBranches.isEmpty ? nil : builtBranches.removeValue(forKey: number)
    }
}
