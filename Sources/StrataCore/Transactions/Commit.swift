import Glibc

// The commit protocol: one flush per durable commit.
//
// A commit writes its dirty pages and then its meta, and syncs once (`fdatasync`). The meta names
// every page the commit wrote (`MetaPage.pageRuns`), and every page carries its page number, the
// transaction that wrote it and a checksum. Until that one sync returns, the disk may hold any
// subset of those writes, in any order, torn at sector boundaries. Whoever opens the store with no
// live writer to trust (after a crash or a power loss; a reader process too, when it is the first
// to open the store) accepts the newest meta only if it decodes and every page it names is intact
// (`MetaReader.damage`); otherwise it opens at the previous meta. That fallback is always whole:
//
// - The previous commit was synced before this one wrote anything (its sync returned before it was
//   acknowledged, and commits are serial).
// - This commit never overwrote a page the previous commit can reach: it writes only pages past the
//   old high-water mark or pages freed by transactions before the previous one (`PageAllocator`:
//   a page freed by T is reused only once T < min(committed generation, oldest reader), so pages
//   freed by the last commit stay untouched), and its meta goes into the other meta slot.
// - The free pages are part of each generation's state: its free-page tree, and (format 4) the
//   recently freed pages its meta carries (`CarriedFreePages`), which a small commit updates
//   instead of the tree: it reuses pages from the list, appends the ones it freed and writes the
//   list with its meta. The list is covered by the meta's write, its own checksum and the one
//   sync, so it is exactly as durable as the tree root the meta names; falling back to the
//   previous meta falls back to its list, whose pages this commit could reuse only under the
//   rule above (they are free in that generation too). Pages freed by the last commit are in
//   its list, or in its free tree if its list spilled there, and stay out of reach like any
//   others.
// - A meta names at most `MetaPage.verifiedPageLimit` pages (2 MiB) in at most `runCapacity` runs,
//   so opening verifies at most that much (twice if the newest commit is rejected). A larger
//   commit instead syncs its pages first and writes a meta naming none: two flushes, which is
//   noise next to writing more than 2 MiB.
// - File growth needs nothing extra: `fdatasync` flushes the size change of an `ftruncate` that
//   grew the file (the size is metadata needed to read the data back; see fdatasync(2)), so the
//   one sync covers the growth too. If the size does not reach the disk, the pages beyond it read
//   short and the commit is rejected.
// - Readers that follow a live writer learn of a commit only from the generation in the lock file,
//   which is published after the sync: they never verify anything.
// - A writer that opens a store first wipes a rejected meta (its transaction id and pages will be
//   reused, which could make it verify later) and syncs what it adopted (`WriterRecovery`).
// - Number, transaction id and checksum do not tell this commit's page from one an abandoned
//   attempt at the same transaction id (a commit that failed or crashed before its meta) left at
//   the same place, with a valid checksum of its own. The meta therefore also carries a digest of
//   the stored checksums of its pages (`MetaPage.pageDigest`), which opening recomputes.
// - A commit skipped at open is reported (`Database.skippedCommit`): the checks cannot tell a
//   commit cut short from one damaged on the disk after its sync, so neither is silent. A writer
//   never moves a published generation backwards under other open handles (typed error instead).
//
// Alternatives weighed: LMDB and libmdbx sync the pages, then write and sync the meta (two
// flushes, as Strata did before: `O_DSYNC` meta); a write-ahead log also pays one flush but writes
// every page twice and needs checkpoints. Verifying the last commit's pages at open costs a few
// milliseconds once, only when no process has the store open.

/// The steps of a commit. Order matters; each step's comment says what it protects.
extension WriteTransaction {
    /// Makes every change durable (per the store's durability) and visible, as one new
    /// generation. If it throws, nothing was committed and the transaction is over.
    public func commit() throws {
        try checkActive()
        guard nestedFrames.isEmpty else { throw StrataError.misuse("commit() inside a nested transaction; return from its body instead") }
        guard !isInsideWriteBody else {
            throw StrataError.misuse("commit() inside a write body; the write commits when its body returns (use beginWrite() to commit by hand)")
        }
        guard !hasFailed else {
            throw StrataError.misuse("an operation of this transaction failed after it had started changing pages; the transaction can only be aborted")
        }
        defer { finish() }
        // 1. Trees changed by this transaction get their new records in the catalog.
        for index in trees.indices where trees[index].isDirty {
            var record = catalog
            let name = trees[index].name
            if trees[index].isDropped {
                _ = try name.withBytes { try remove(from: &record, key: $0) }
            } else {
                let treeRecord = trees[index].record
                try withUnsafeTemporaryAllocation(byteCount: TreeRecord.encodedSize, alignment: 8) { encoded in
                    treeRecord.encode(into: encoded.baseAddress!)
                    _ = try name.withBytes { key in try insert(into: &record, key: key, value: UnsafeRawBufferPointer(encoded), mode: .upsert) }
                }
            }
            record.lastModified = transactionID
            catalog = record
        }
        // A transaction that changed nothing commits nothing: no new generation, no sync.
        guard !access.dirty.isEmpty || !allocator.freed.isEmpty else { return }
        // 2. The free list last: recording it is the final change to any tree (or, when it fits,
        //    it goes into the meta and no tree changes: `PageAllocator`).
        try saveFreeList()
        var meta = MetaPage(transactionID: transactionID, pageSize: pageSize, catalog: catalog,
                            freeTree: allocator.freeTree, pageCount: allocator.nextPage, commitTime: Clock.wallNanoseconds(),
                            formatVersion: base.writtenFormat)
        meta.carried = allocator.carriedOut
        try database.persist(dirty: access.dirty, meta: meta, session: session)
        // Its tree pages are now the committed ones: the next transactions copy them from here.
        session.keepLastCommit(&access.dirty)
    }
}

extension Database {
    /// Steps 3-7 of a commit. If any step fails the store stays at its previous generation: the
    /// meta is written after the pages it names (and is wiped again if its sync fails), and
    /// readers only follow a published meta.
    func persist(dirty: DirtyPages, meta proposed: MetaPage, session: WriterSession) throws {
        var meta = proposed
        // The store's format never changes in place (`PageLayout`): the meta is in its base's
        // format (`MetaPage.writtenFormat`); one naming another page checksum would name pages
        // sealed with another hash.
        precondition(meta.formatVersion >= 2 && meta.pageChecksum == pageChecksum, "a commit's meta must be in its store's format")
        let syncs = options.durability != .none
        // 3. The file must cover every page before a meta names it (readers bound reads by it).
        //    Not synced on its own: the commit's one sync covers the new size.
        let needed = meta.pageCount * UInt64(pageSize)
        if needed > session.fileSize {
            let step = min(max(session.fileSize / 4, 1 << 20), 1 << 30)
            let target = max(needed, session.fileSize + step)
            let rounded = (target + UInt64(pageSize) - 1) / UInt64(pageSize) * UInt64(pageSize)
            try io.setSize(rounded)
            session.fileSize = rounded
        }
        // 4. Dirty pages, stamped and checksummed, in page order, contiguous runs in one gathered
        //    write each. The runs are what the meta names. (The allocator keeps a small commit's
        //    pages in few runs: `PageAllocator.nextSinglePage`.)
        let pages = dirty.valuesByNumber
        var runs: [MetaPage.PageRun] = []
        runs.reserveCapacity(pages.count)
        var pageTotal: UInt64 = 0
        var digest = MetaPage.digestStart(transactionID: meta.transactionID)
        var run: [UnsafeRawBufferPointer] = []
        run.reserveCapacity(pages.count)
        for page in pages {
            page.setTransaction(meta.transactionID)
            page.seal(pageChecksum)
            digest = MetaPage.digest(folding: page.storedChecksum, into: digest)
            if let last = runs.last, page.number != last.first + last.count {
                try io.writeGathered(run, at: last.first * UInt64(pageSize))
                run.removeAll(keepingCapacity: true)
            }
            if run.isEmpty { runs.append(MetaPage.PageRun(first: page.number, count: 0)) }
            run.append(page.bytes)
            runs[runs.count - 1].count += UInt64(page.pageCount)
            pageTotal += UInt64(page.pageCount)
        }
        if let last = runs.last { try io.writeGathered(run, at: last.first * UInt64(pageSize)) }
        // 5. A commit too large to verify at open syncs its pages now and names none.
        if runs.count <= MetaPage.runCapacity(pageSize: pageSize, carriedWords: meta.carried.wordCount)
            && pageTotal <= MetaPage.verifiedPageLimit(pageSize: pageSize) {
            meta.pageRuns = runs
            meta.pageDigest = digest
        } else if syncs {
            try io.syncData()
        }
        // The commit time is taken as the meta is written: observers measure notification latency
        // from it.
        meta.commitTime = Clock.wallNanoseconds()
        // 6. The meta, into the slot of the commit before last (never the current one), then the
        //    one sync that makes pages, meta and file size durable together.
        try withUnsafeTemporaryAllocation(byteCount: meta.byteCount, alignment: 8) { buffer in
            meta.encode(into: buffer.baseAddress!)
            let offset = (meta.transactionID % 2) * UInt64(pageSize)
            var written = false
            do {
                try io.writeGathered([UnsafeRawBufferPointer(buffer)], at: offset)
                written = true
                if syncs { try io.syncData() }
            } catch {
                // A meta that was written but not synced may still reach the disk, and with its
                // pages it would verify. Wipe it, so the store reopens at the previous generation
                // as this commit reports (once the zeros are written, every later open reads them;
                // syncing them is best effort). If the wipe cannot even be written, this handle
                // must not write again: its next commit would reuse the transaction id and pages
                // the orphaned meta names. (A failed write leaves at most a torn meta, which fails
                // a checksum.)
                if written {
                    memset(buffer.baseAddress!, 0, MetaPage.encodedSize)
                    do {
                        try io.writeGathered([UnsafeRawBufferPointer(rebasing: buffer[0..<MetaPage.encodedSize])], at: offset)
                        if syncs { try? io.syncData() }
                    } catch {
                        session.isPoisoned = true
                    }
                }
                throw error
            }
        }
        // 7. Publish: readers that load the new generation find its meta already in place, and
        //    (at full durability) on the disk.
        session.committed = meta
        session.lastCommitPages = dirty.count
        session.pagesExpectedNext = dirty.count
        lockFile.lastCommitTime.pointee.store(meta.commitTime, ordering: .relaxed)
        lockFile.generation.pointee.store(meta.transactionID, ordering: .sequentiallyConsistent)
    }
}
