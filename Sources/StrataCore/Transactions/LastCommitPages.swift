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
/// committed state, and with it the table, as it was. Buffers in the table are never in a dirty
/// table and never recycled while they are here, so nothing writes to them.
extension Database.WriterSession {
    /// At most this many bytes of pages are kept (1,024 pages of 4 KiB): what a commit of a
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
        lastCommit.drain { recycle($0) }
        guard dirty.count <= lastCommitCapacity else { return }
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
        }
        for buffer in passed {
            lastCommit.removeValue(forKey: buffer.number)
            dirty[buffer.number] = buffer
        }
    }

    /// The buffer the last commit wrote for page `number`, if it is a tree page it kept.
    @inline(__always)
    func lastCommitBuffer(_ number: UInt64) -> PageBuffer? { lastCommit[number] }
}
