import Glibc

/// The commit protocol. Order matters; each step's comment says what it protects.
extension WriteTransaction {
    /// Makes every change durable (per the store's durability) and visible, as one new
    /// generation. If it throws, nothing was committed and the transaction is over.
    public func commit() throws {
        try checkActive()
        guard nestedFrames.isEmpty else { throw StrataError.misuse("commit() inside a nested transaction; return from its body instead") }
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
        // 2. The free list last: recording it is the final change to any tree.
        try saveFreeList()
        let meta = MetaPage(transactionID: transactionID, pageSize: pageSize, catalog: catalog,
                            freeTree: allocator.freeTree, pageCount: allocator.nextPage, commitTime: Clock.wallNanoseconds())
        try database.persist(dirty: access.dirty, meta: meta, session: session)
    }
}

extension Database {
    /// Steps 3-7 of a commit. If any step fails the store stays at its previous generation: the
    /// meta is written only after the pages it names, and readers only follow a published meta.
    func persist(dirty: DirtyPages, meta proposed: MetaPage, session: WriterSession) throws {
        var meta = proposed
        // 3. The file must cover every page before a meta names it (readers bound reads by it).
        let needed = meta.pageCount * UInt64(pageSize)
        if needed > session.fileSize {
            let step = min(max(session.fileSize / 4, 1 << 20), 1 << 30)
            let target = max(needed, session.fileSize + step)
            let rounded = (target + UInt64(pageSize) - 1) / UInt64(pageSize) * UInt64(pageSize)
            try io.setSize(rounded)
            session.fileSize = rounded
        }
        // 4. Dirty pages, checksummed, in page order, contiguous runs in one gathered write.
        let pages = dirty.values.sorted { $0.number < $1.number }
        var run: [UnsafeRawBufferPointer] = []
        var runStart: UInt64 = 0
        var runEnd: UInt64 = 0
        for page in pages {
            page.setTransaction(meta.transactionID)
            page.seal()
            if !run.isEmpty && page.number != runEnd {
                try io.writeGathered(run, at: runStart * UInt64(pageSize))
                run.removeAll(keepingCapacity: true)
            }
            if run.isEmpty { runStart = page.number }
            run.append(page.bytes)
            runEnd = page.number + UInt64(page.pageCount)
        }
        if !run.isEmpty { try io.writeGathered(run, at: runStart * UInt64(pageSize)) }
        // 5. Pages reach the disk before the meta that points at them.
        if options.durability != .none { try io.syncData() }
        // The commit time is taken once the data is durable: it is what observers measure
        // notification latency from.
        meta.commitTime = Clock.wallNanoseconds()
        // 6. The meta, into the slot of the commit before last (never the current one), then
        //    synced: through the O_DSYNC descriptor in one call, or written and synced.
        try withUnsafeTemporaryAllocation(byteCount: MetaPage.encodedSize, alignment: 8) { buffer in
            meta.encode(into: buffer.baseAddress!, byteCount: MetaPage.encodedSize)
            let offset = (meta.transactionID % 2) * UInt64(pageSize)
            var written = false
            do {
                if let metaFile {
                    // One call writes and syncs: if it fails, the bytes may be there or not.
                    written = true
                    try metaFile.write(UnsafeRawBufferPointer(buffer), at: offset)
                } else {
                    try io.writeGathered([UnsafeRawBufferPointer(buffer)], at: offset)
                    written = true
                    if options.durability == .full { try io.syncData() }
                }
            } catch {
                // A meta that was written but not synced may still reach the disk. Wipe it, so the
                // store reopens at the previous generation as this commit reports (once the zeros
                // are written, every later open reads them; syncing them is best effort). If the
                // wipe cannot even be written, this handle must not write again: its next commit
                // would reuse pages the orphaned meta still names. (A failed write leaves at most
                // a torn meta, which fails its checksum.)
                if written {
                    memset(buffer.baseAddress!, 0, MetaPage.encodedSize)
                    do {
                        if let metaFile {
                            try metaFile.write(UnsafeRawBufferPointer(buffer), at: offset)
                        } else {
                            try io.writeGathered([UnsafeRawBufferPointer(buffer)], at: offset)
                            try? io.syncData()
                        }
                    } catch {
                        session.isPoisoned = true
                    }
                }
                throw error
            }
        }
        // 7. Publish: readers that load the new generation find its meta already in place.
        session.committed = meta
        lockFile.lastCommitTime.pointee.store(meta.commitTime, ordering: .relaxed)
        lockFile.generation.pointee.store(meta.transactionID, ordering: .sequentiallyConsistent)
    }
}
