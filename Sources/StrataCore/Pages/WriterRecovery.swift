import Glibc

/// What a writer does once it holds the writer lock and before its first commit, so that commits
/// build only on durable state.
///
/// - A slot holding a rejected commit (or bytes that do not decode) is wiped. The next commit
///   reuses that commit's transaction id and often its page numbers; if the old meta stayed, a
///   power loss during the next commit could leave it naming pages that the new commit wrote with
///   the same id and valid checksums, and opening would accept it.
/// - A store whose newest meta is format 1 gets a format-2 meta of the same content as the next
///   generation (an empty commit, so an older Strata that ignores the new meta opens at identical
///   content; after the next commit both metas are format 2 and an older Strata refuses the store
///   with `unsupportedFormat`). Format 2, not 3: its pages keep their checksums (`PageLayout`).
/// - The chosen meta may have been adopted from a writer that died before its sync (its pages were
///   in the page cache, so it verified): the file is synced before anything builds on it.
///
/// These writes bypass the data-file seam (`DataFileIO`), which models the steps of a commit.
enum WriterRecovery {
    static func prepare(_ file: PosixFile, choice: MetaReader.Choice, durability: Durability) throws -> MetaPage {
        var meta = choice.meta
        let pageSize = meta.pageSize
        var wrote = false
        if let stale = choice.staleSlot {
            let zeros = [UInt8](repeating: 0, count: MetaPage.encodedSize)
            try zeros.withUnsafeBytes { try file.write($0, at: stale * UInt64(pageSize)) }
            wrote = true
        }
        if meta.formatVersion == 1 {
            meta.transactionID += 1
            meta.formatVersion = meta.writtenFormat // same pages: format 2, never 3
            meta.pageRuns = []
            try withUnsafeTemporaryAllocation(byteCount: meta.byteCount, alignment: 8) { buffer in
                meta.encode(into: buffer.baseAddress!)
                try file.write(UnsafeRawBufferPointer(buffer), at: (meta.transactionID % 2) * UInt64(pageSize))
            }
            wrote = true
        }
        if wrote || durability != .none { try file.syncData() }
        return meta
    }
}
