import Glibc

extension Database {
    /// The newest on-disk format version this build reads and writes, the one new stores get. It
    /// also reads and writes stores of the older versions (1 to 3) in their own format (see
    /// `storeFormatVersion`); a newer version is refused with `StrataError.unsupportedFormat`.
    public static var formatVersion: UInt32 { PageLayout.formatVersion }

    /// The on-disk format version of this store, the one its newest meta is in: 4 for a store
    /// created by this build (or a compacting copy), 3 or 2 for one created by an older build,
    /// which keeps its format for life, so that processes still running that build keep working
    /// with it (a format-1 store reports 2, the format its first writer upgrades it to: same
    /// pages, same page checksums). A compacting copy (`copy(to:compact: true)`, `strata copy
    /// --compact`) is the way to move a store to the current format. Learned from the meta the
    /// handle opened, like `pageSize`, so a closed handle still answers it.
    public var storeFormatVersion: UInt32 { openedFormat }

    /// The size of the data file in bytes (it grows in steps, so it may exceed the pages in use).
    public func dataFileSize() throws -> UInt64 { try dataFile.size() }

    /// How many pages below `pageCount` were written by a commit after `generation`, judged by
    /// their page headers: space that was free at `generation` and has been reused since
    /// (copy-on-write never rewrites a live page in place). Reads the headers with `pread`; a
    /// page being rewritten concurrently may be miscounted, so this is a statistic, not a check.
    public func pagesWritten(after generation: UInt64, below pageCount: UInt64) throws -> Int {
        let limit = min(pageCount, try dataFile.size() / UInt64(pageSize))
        guard limit > PageLayout.metaPageCount else { return 0 }
        let chunkPages = max(1, (4 << 20) / pageSize)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkPages * pageSize, alignment: 4096)
        defer { buffer.deallocate() }
        var written = 0
        var page = PageLayout.metaPageCount
        while page < limit {
            let count = Int(min(UInt64(chunkPages), limit - page))
            let got = try dataFile.read(into: buffer.baseAddress!, count: count * pageSize, at: page * UInt64(pageSize))
            for index in 0..<(got / pageSize) {
                let header = Page.Header(buffer.baseAddress! + index * pageSize)
                if header.number == page + UInt64(index), header.kind.map({ $0 != .meta }) ?? false,
                   header.transactionID > generation {
                    written += 1
                }
            }
            page += UInt64(count)
        }
        return written
    }
}
