import Glibc

/// What `Database.copy(to:compact:)` made.
public struct CopyReport: Sendable, Equatable {
    /// The generation copied (the snapshot read).
    public let generation: UInt64
    /// The snapshot's high-water mark in the source: pages read.
    public let sourcePageCount: UInt64
    /// Pages in the copy's file (fewer than the source's with `compact`).
    public let pageCount: UInt64
    /// The copy's generation: the source's for a page copy, a new count for a compacting one.
    public let copyGeneration: UInt64
}

extension Database {
    /// Copies the store into a new store at `destination`, online: everything comes from one read
    /// snapshot, so writers (in any process) keep committing meanwhile; they only cannot reuse the
    /// pages that snapshot reaches until the copy ends.
    ///
    /// - Without `compact`, the snapshot's pages are copied as they are and its meta is written
    ///   fresh from the snapshot (the other meta slot is zeroed), so the copy opens at exactly
    ///   the snapshot's generation.
    /// - With `compact`, every tree is rebuilt entry by entry in key order into a new store with
    ///   the same page size: no free pages, a minimal file, a new generation count.
    ///
    /// The copy is synced to disk before this returns. `destination` must not exist (nothing is
    /// overwritten: `StrataError.misuse`); a copy that fails is removed. `progress` receives
    /// (done, total) in pages (page copy) or entries (compact).
    ///
    /// ```swift
    /// let report = try db.copy(to: "/backups/library-\(date).strata")
    /// ```
    @discardableResult
    public func copy(to destination: String, compact: Bool = false, progress: ((UInt64, UInt64) -> Void)? = nil) throws -> CopyReport {
        try checkOpen()
        // "b.strata/" names the directory, not a child of it: its parent is what must be synced.
        var destination = destination
        while destination.count > 1 && destination.hasSuffix("/") { destination.removeLast() }
        let mode = try dataFile.status().st_mode & 0o777
        // The directory is created here, in one step that fails if anything is at the path: a
        // check first and a `mkdir` later would let another process's store appear in between,
        // and the clean-up of a failed copy would then delete its files. From here on everything
        // in the directory is this copy's. Directories need search permission wherever the files
        // grant read permission.
        guard mkdir(destination, mode | ((mode & 0o444) >> 2)) == 0 else {
            if errno == EEXIST { throw StrataError.misuse("\(destination) already exists; a copy never overwrites, choose a new destination") }
            throw PosixFile.error("mkdir", destination)
        }
        do {
            let transaction = try beginRead()
            defer { transaction.end() }
            let report = compact ? try compactCopy(transaction, to: destination, mode: mode, progress: progress)
                                 : try pageCopy(transaction, to: destination, mode: mode, progress: progress)
            // The data file's entry in the new directory, then the directory's in its parent.
            StoreDirectory.sync(directory: destination)
            StoreDirectory.syncDirectory(of: destination)
            return report
        } catch {
            StoreCopyFiles.remove(destination)
            throw error
        }
    }

    private func pageCopy(_ transaction: ReadTransaction, to destination: String, mode: mode_t,
                          progress: ((UInt64, UInt64) -> Void)?) throws -> CopyReport {
        let pageCount = transaction.pageCount
        let output = try PosixFile(path: destination + "/data", flags: O_WRONLY | O_CREAT | O_EXCL, mode: mode)
        defer { output.close() }
        // The snapshot's meta, encoded afresh (never read back from the file, where the writer
        // may be rewriting that slot), in its own slot; the other slot zeroed: it would name
        // another generation, whose pages were not copied.
        // The pages keep their checksums, so the copy keeps the source's format (`PageLayout`); a
        // compacting copy rebuilds every page and is written in the current format.
        // The meta's carried free pages are free in the copy too (the snapshot's are carried only
        // by a format-4 store, whose copy is format 4).
        var meta = MetaPage(transactionID: transaction.generation, pageSize: pageSize, catalog: transaction.catalog,
                            freeTree: transaction.freeTree, pageCount: pageCount, commitTime: transaction.commitTime,
                            formatVersion: transaction.formatVersion)
        meta.carried = try transaction.carriedFree()
        let slot = meta.transactionID % 2
        let page = UnsafeMutableRawBufferPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { page.deallocate() }
        page.initializeMemory(as: UInt8.self, repeating: 0)
        try output.write(UnsafeRawBufferPointer(page), at: (1 - slot) * UInt64(pageSize))
        // Pages below the snapshot's high-water mark are inside the file and mapped.
        let base = try mapping.base(covering: Int(pageCount) * pageSize)
        let chunkPages = UInt64(max(1, (4 << 20) / pageSize))
        var next = PageLayout.metaPageCount
        while next < pageCount {
            let count = min(chunkPages, pageCount - next)
            let offset = Int(next) * pageSize
            try output.write(UnsafeRawBufferPointer(start: base + offset, count: Int(count) * pageSize), at: UInt64(offset))
            next += count
            progress?(next, pageCount)
        }
        try output.setSize(pageCount * UInt64(pageSize))
        // The pages are durable before the meta that makes the copy a store: the meta names no
        // page runs (nothing to verify at open), so it must never arrive before them.
        try output.syncData()
        meta.encode(into: page.baseAddress!, slot: slot)
        try output.write(UnsafeRawBufferPointer(page), at: slot * UInt64(pageSize))
        try output.syncData()
        return CopyReport(generation: transaction.generation, sourcePageCount: pageCount, pageCount: pageCount,
                          copyGeneration: transaction.generation)
    }

    private func compactCopy(_ transaction: ReadTransaction, to destination: String, mode: mode_t,
                             progress: ((UInt64, UInt64) -> Void)?) throws -> CopyReport {
        var options = DatabaseOptions()
        options.pageSize = pageSize
        options.fileMode = mode
        // Unsynced batches: the whole file is synced once at the end (a failed copy is removed).
        options.durability = .none
        let names = try transaction.treeNames()
        let total = try names.saturatingSum { UInt64(try transaction.count(transaction.tree($0))) }
        let target = try Database(path: destination, mode: .readWrite, options: options)
        defer { target.close() }
        var write = try target.beginWrite()
        defer { write.abort() }
        var pending = 0
        var done: UInt64 = 0
        for name in names {
            var tree = try write.createTree(name)
            try transaction.scan(try transaction.tree(name)) { key, value in
                try write.put(key, value, in: tree)
                pending += 1
                done += 1
                if pending >= 10_000 {
                    try write.commit()
                    write = try target.beginWrite()
                    tree = try write.tree(name)
                    pending = 0
                    progress?(done, total)
                }
                return true
            }
        }
        try write.commit()
        progress?(done, total)
        // The file grows in steps: trim it to the pages in use, then make everything durable.
        let (pageCount, generation) = try target.read { ($0.pageCount, $0.generation) }
        try target.dataFile.setSize(pageCount * UInt64(pageSize))
        try target.dataFile.syncData()
        return CopyReport(generation: transaction.generation, sourcePageCount: transaction.pageCount, pageCount: pageCount,
                          copyGeneration: generation)
    }
}

enum StoreCopyFiles {
    /// Removes a store directory this process created (its data and lock files).
    static func remove(_ path: String) {
        unlink(path + "/data")
        unlink(path + "/lock")
        rmdir(path)
    }
}
