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
/// wrote more than `capacity` pages), and a transaction that aborts or fails to commit leaves the
/// committed state, and with it the table, as it was. Buffers in the table are never in a dirty
/// table and never recycled while they are here, so nothing writes to them.
extension Database.WriterSession {
    /// At most this many pages are kept: what a small commit writes, with room to spare.
    static let lastCommitCapacity = 32

    /// After a successful commit: keeps the commit's buffers (moving them out of `dirty`) if there
    /// are few enough, and recycles the previous commit's.
    func keepLastCommit(_ dirty: inout DirtyPages) {
        lastCommit.drain { recycle($0) }
        guard dirty.count <= Database.WriterSession.lastCommitCapacity else { return }
        // The emptied table's storage holds the new one (no allocation per commit).
        var kept = lastCommit
        lastCommit = DirtyPages()
        var passed: [PageBuffer] = []
        dirty.drain { buffer in
            if buffer.pageCount == 1, let kind = buffer.kind, kind == .branch || kind == .leaf {
                kept[buffer.number] = buffer
            } else {
                passed.append(buffer)
            }
        }
        for buffer in passed { dirty[buffer.number] = buffer }
        lastCommit = kept
    }

    /// The buffer the last commit wrote for page `number`, if it is a tree page it kept.
    @inline(__always)
    func lastCommitBuffer(_ number: UInt64) -> PageBuffer? { lastCommit[number] }
}
