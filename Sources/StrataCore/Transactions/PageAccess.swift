import CStrataSystem

/// How a transaction reaches pages: its own dirty buffers first (write transactions), then the
/// committed snapshot in the shared mapping. Every page number is checked against the snapshot's
/// page count before its address is formed, so a forged number can never read past the file.
final class PageAccess {
    let pageSize: Int
    /// The store's page checksum (`verifiesChecksums`, `StoreChecker`).
    let pageChecksum: PageChecksum
    /// Base of the mapping that covers the snapshot. (Changed only by `renew`, between two
    /// leases, by the one thread that owns a pooled read transaction: hence unchecked.)
    @exclusivity(unchecked) private(set) var base: UnsafeRawPointer
    /// Pages `2..<committedPageCount` may be read from the mapping.
    @exclusivity(unchecked) private(set) var committedPageCount: UInt64
    /// Keeps the mapping alive for `ByteView`s.
    let mapping: FileMapping
    /// Dirty pages of a write transaction, keyed by page number. Exempt from the runtime
    /// exclusivity check (a measurable share of every put): only the thread running the
    /// transaction touches it, and no access to it overlaps another (none is held across a call
    /// that could reach it again).
    @exclusivity(unchecked) var dirty = DirtyPages()
    let isWritable: Bool
    let verifiesChecksums: Bool
    /// Pages written by a later transaction than this are not part of the snapshot: `.max` for
    /// snapshots the writer is known to protect, the snapshot's generation for the others.
    @exclusivity(unchecked) private(set) var newestTransaction: UInt64
    /// Incremented by every modification; cursors compare it to detect that their pages moved.
    /// (Unchecked for the reason `dirty` is.)
    @exclusivity(unchecked) var modificationCount = 0
    /// Incremented when the transaction or snapshot using this access ends. A cursor remembers
    /// the lease it was made in and refuses to move once it changed: after the end its snapshot's
    /// pages are no longer pinned (a read) or its dirty buffers are recycled (a write), and a
    /// pooled access may already serve another snapshot. It only grows, so a stale cursor can
    /// never match again. (Unchecked for the reason `dirty` is.)
    @exclusivity(unchecked) private(set) var lease = 0

    /// Ends the current lease: cursors and scans made under it stop working.
    func endLease() {
        lease += 1
        modificationCount += 1
    }

    /// Points a read access at another snapshot, for a reused read transaction (after
    /// `endLease()`: nothing made under the old lease can read through it any more).
    func renew(base: UnsafeRawPointer, committedPageCount: UInt64, newestTransaction: UInt64) {
        self.base = base
        renew(committedPageCount: committedPageCount, newestTransaction: newestTransaction)
    }

    /// `renew` on the same mapping base (the snapshot needs no more of the mapping than the last).
    @inline(__always)
    func renew(committedPageCount: UInt64, newestTransaction: UInt64) {
        precondition(!isWritable, "only read accesses are reused")
        self.committedPageCount = committedPageCount
        self.newestTransaction = newestTransaction
    }

    init(pageSize: Int, pageChecksum: PageChecksum, base: UnsafeRawPointer, committedPageCount: UInt64, mapping: FileMapping,
         isWritable: Bool, verifiesChecksums: Bool = false, newestTransaction: UInt64 = .max) {
        self.pageChecksum = pageChecksum
        self.verifiesChecksums = verifiesChecksums
        self.newestTransaction = newestTransaction
        self.pageSize = pageSize
        self.base = base
        self.committedPageCount = committedPageCount
        self.mapping = mapping
        self.isWritable = isWritable
    }

    @inline(__always)
    func page(_ number: UInt64) throws -> Page {
        if isWritable, let buffer = dirty[number] {
            return try Page(validating: buffer.memory, size: pageSize, number: number)
        }
        guard number >= PageLayout.metaPageCount, number < committedPageCount else {
            throw StrataError.corruptPage(page: number, reason: "page number outside the file (2..<\(committedPageCount))")
        }
        let address = base + Int(number) * pageSize
        if verifiesChecksums { try verifyChecksum(address, pages: 1, number: number) }
        let page = try Page(validating: address, size: pageSize, number: number)
        if page.transactionID > newestTransaction { throw overwritten(number, by: page.transactionID) }
        return page
    }

    private func overwritten(_ number: UInt64, by transaction: UInt64) -> StrataError {
        StrataError.snapshotOverwritten(generation: newestTransaction, page: number, writtenBy: transaction)
    }

    /// Starts loading committed page `number` into the cache (a hint: nothing is read or
    /// validated here; `page(_:)` does that when the page is used). Out-of-range numbers and
    /// dirty pages are left alone.
    func prefetch(_ number: UInt64) {
        guard number >= PageLayout.metaPageCount, number < committedPageCount, !(isWritable && dirty[number] != nil) else { return }
        let address = base + Int(number) * pageSize
        // Four lines per step (page sizes are powers of two >= 4096): `stride` cost several
        // instructions per line here.
        var line = 0
        while line < pageSize {
            strata_prefetch(address + line)
            strata_prefetch(address + (line &+ 64))
            strata_prefetch(address + (line &+ 128))
            strata_prefetch(address + (line &+ 192))
            line &+= 256
        }
    }

    private func verifyChecksum(_ address: UnsafeRawPointer, pages: Int, number: UInt64) throws {
        guard Page.Header(address).checksumMatches(pageCount: pages, pageSize: pageSize, checksum: pageChecksum) else {
            throw StrataError.corruptPage(page: number, reason: "checksum mismatch")
        }
    }

    /// The owner that keeps the memory of page `number` alive.
    @inline(__always)
    func owner(of number: UInt64) -> AnyObject {
        if isWritable, let buffer = dirty[number] { return buffer }
        return mapping
    }

    /// The bytes of an overflow value: `length` bytes after the header of a run of pages.
    func overflowValue(_ number: UInt64, length: Int) throws -> ByteView {
        let pages = Page.overflowPageCount(valueLength: length, pageSize: pageSize)
        let start: UnsafeRawPointer
        let owner: AnyObject
        if isWritable, let buffer = dirty[number] {
            guard buffer.pageCount == pages else {
                throw StrataError.corruptPage(page: number, reason: "overflow run has \(buffer.pageCount) pages, value needs \(pages)")
            }
            start = UnsafeRawPointer(buffer.memory)
            owner = buffer
        } else {
            guard number >= PageLayout.metaPageCount, number < committedPageCount,
                  UInt64(pages) <= committedPageCount - number else {
                throw StrataError.corruptPage(page: number, reason: "overflow run of \(pages) pages outside the file")
            }
            start = base + Int(number) * pageSize
            owner = mapping
            if verifiesChecksums { try verifyChecksum(start, pages: pages, number: number) }
        }
        let header = Page.Header(start)
        guard header.isOverflowRun(number, pageCount: pages) else {
            throw StrataError.corruptPage(page: number, reason: "not the overflow run its leaf names")
        }
        if header.transactionID > newestTransaction { throw overwritten(number, by: header.transactionID) }
        return ByteView(header.overflowValue(length: length), owner: owner)
    }

    /// The value of leaf node `node` of `page`, without copying.
    @inline(__always)
    func value(of node: Page.LeafNode, in page: Page) throws -> ByteView {
        try value(of: node, owner: owner(of: page.number))
    }

    /// The value of leaf node `node`, without copying; `leafOwner` keeps the node's leaf page
    /// alive (`owner(of:)` of it; a walk of one leaf looks it up once). An overflow value's
    /// view has the owner of its own pages.
    @inline(__always)
    func value(of node: Page.LeafNode, owner leafOwner: AnyObject) throws -> ByteView {
        if node.isOverflow { return try overflowValue(node.overflowPage, length: node.valueLength) }
        return ByteView(UnsafeRawBufferPointer(start: node.payload, count: node.valueLength), owner: leafOwner)
    }

    /// Calls `body` with the bytes of the value of leaf node `node`, valid during the call only:
    /// no owner is looked up or retained for a value stored in the leaf.
    @inline(__always)
    func withValue<Result>(of node: Page.LeafNode, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        if node.isOverflow { return try overflowValue(node.overflowPage, length: node.valueLength).withUnsafeBytes(body) }
        return try body(UnsafeRawBufferPointer(start: node.payload, count: node.valueLength))
    }
}
