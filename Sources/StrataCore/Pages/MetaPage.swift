import Glibc

/// The commit record. Pages 0 and 1 hold the two most recent metas; commit N writes page N % 2, so
/// the previous commit's meta is never touched while a new one is written.
///
/// Formats 2, 3 and 4 (2 and 3 differ only in the hash of page checksums, see `PageLayout`; 4 is 3
/// plus the carried free pages at 204 and after the run list; format 1 is the same up to byte
/// 192, then `200 u64 checksum of bytes 0..<200` and no page list). The meta checksums below use
/// `Checksum` in every format:
///
///     0   u64 page number (0 or 1)       24  u8 kind = meta
///     32  u64 magic "STRATABS"
///     40  u32 format version
///     44  u32 page size
///     48  u64 transaction id (the generation this meta commits)
///     56  catalog tree record (64 bytes)
///     120 free-page tree record (64 bytes)
///     184 u64 page count (high-water mark: every page < this is inside the file)
///     192 u64 commit time (nanoseconds since 1970)
///     200 u32 run count n (0: the commit's pages were synced before this meta; nothing to verify)
///     204 u32 carried word count k (format 4; 0 before: reserved): see 232 + 8n
///     208 u64 checksum of the page digest and the run list (bytes 224..<232 + 8n, seeded by the
///             transaction id)
///     216 u64 checksum of bytes 0..<216 (a later format must keep this field here, so that a
///             store written by a newer Strata is recognized and refused, never misread)
///     224 u64 page digest: a hash of the stored checksums of the commit's pages, in page order
///             (`MetaPage.digest`). Page number, transaction id and checksum alone do not tell
///             this commit's page from one an abandoned attempt at the same transaction id wrote
///             to the same place (a commit that failed or crashed before its meta; the id and
///             page numbers are then reused); the digest does.
///     232 n runs, u64 each: first page << 24 | page count. The pages this commit wrote, as
///         contiguous runs in page order (see `Database.persist`).
///     232 + 8n (format 4, only when k > 0) u64 checksum of the k words after it (seeded by the
///         transaction id), then k words: the recently freed pages this generation carries
///         outside the free tree (`CarriedFreePages`). Readers copy the fixed part and this block,
///         never the run list; the fixed part's checksum covers k and n, this one the words.
///         Everything up to the block's end stays at least 8 bytes short of the page.
///
/// A torn or bit-rotted meta fails a checksum; opening then uses the other one. Invariant: the
/// file is at least `pageCount * pageSize` bytes long before a meta naming `pageCount` is written.
struct MetaPage: Equatable {
    var transactionID: UInt64
    var pageSize: Int
    var catalog: TreeRecord
    var freeTree: TreeRecord
    var pageCount: UInt64
    var commitTime: UInt64
    /// The pages the commit wrote (empty: nothing to verify; see the run count above). Filled by
    /// `decodingRuns`, not by `decode`: readers following a live writer never need them.
    var pageRuns: [PageRun] = []
    /// The format the meta was read in (1: written by an older Strata, upgraded by the next
    /// writer), or is to be written in (2, 3 or 4: the store's, see `PageLayout`). No default: a
    /// meta written in the wrong format would name pages whose checksums it cannot verify.
    var formatVersion: UInt32
    /// The digest of the stored checksums of the pages `pageRuns` names (0 when it names none).
    var pageDigest: UInt64 = 0
    /// Free pages this generation lists here instead of in `freeTree` (format 4; always empty
    /// in older formats). Filled by `decodingCarried`, not by `decode`.
    var carried = CarriedFreePages()
    /// A reader's copy of the carried block (its checksum word, then its words; empty if it
    /// carries none), checksummed but not decoded: readers need the list only for `check`,
    /// `copy` and `readerReport`, which decode it with `CarriedFreePages.decode(copy:)`. Filled by
    /// `copyingCarried`, instead of `carried`.
    var carriedCopy: [UInt64] = []

    /// Bytes of the fixed part (everything but the run list).
    static let encodedSize = Offset.runList

    /// Field offsets (the table above); encode and decode use these and nothing else.
    enum Offset {
        /// The page header's page number and transaction id (see `PageLayout`).
        static let slot = PageLayout.pageNumberOffset
        static let writtenBy = PageLayout.transactionOffset
        static let magic = PageLayout.headerSize
        static let formatVersion = 40
        static let pageSize = 44
        static let transactionID = 48
        static let catalog = 56
        static let freeTree = catalog + TreeRecord.encodedSize
        static let pageCount = freeTree + TreeRecord.encodedSize
        static let commitTime = pageCount + 8
        static let runCount = commitTime + 8
        /// Format 4; reserved (0) in formats 2 and 3.
        static let carriedWordCount = runCount + 4
        /// Format 1 ended here: its checksum of the bytes before it.
        static let legacyChecksum = runCount
        static let runChecksum = runCount + 8
        static let checksum = runChecksum + 8
        static let pageDigest = checksum + 8
        static let runList = pageDigest + 8
    }
    static let checksumOffset = Offset.checksum

    /// A contiguous run of pages written by one commit.
    struct PageRun: Equatable {
        var first: UInt64
        var count: UInt64
    }

    /// The largest transaction number a valid meta holds. Numbers grow by one a commit, so no store
    /// comes near it (2^62 commits at ten million a second take 14,000 years); a meta beyond it is
    /// forged or damaged, and accepting one would make `transactionID + 1` of the next write and
    /// `generation + 1` of the reader report trap. It lies below `SnapshotPins.largestPinnable`, so
    /// a read-only reader can pin every generation a valid meta names.
    static let largestTransactionID: UInt64 = 1 << 62

    /// Runs that fit in a meta page next to `carriedWords` carried words, one slot short of the
    /// page so that a meta write is always shorter than any page write (fault-injection doubles
    /// tell them apart by length).
    static func runCapacity(pageSize: Int, carriedWords: Int = 0) -> Int {
        (pageSize - encodedSize - CarriedFreePages.blockByteCount(words: carriedWords)) / 8 - 1
    }

    /// The most pages a meta names: opening verifies them all, so this bounds the cost of opening
    /// (2 MiB read and checksummed). A larger commit syncs its pages before writing its meta.
    static func verifiedPageLimit(pageSize: Int) -> UInt64 { UInt64((2 << 20) / pageSize) }

    /// The page digest before any page: `digest(folding:into:)` each page's (or overflow run's)
    /// stored checksum into it in page order. Commit and open fold the same sequence.
    static func digestStart(transactionID: UInt64) -> UInt64 { Checksum.seed ^ ~transactionID }

    /// Folds one stored page checksum into a running page digest (order matters).
    @inline(__always)
    static func digest(folding checksum: UInt64, into digest: UInt64) -> UInt64 {
        var mixed = (digest ^ checksum) &* 0x9E37_79B9_7F4A_7C15
        mixed ^= mixed >> 29
        return mixed &* 0xBF58_476D_1CE4_E5B9
    }

    /// The hash of the page checksums of the store this meta belongs to (`decode` accepts only
    /// versions that name one).
    var pageChecksum: PageChecksum {
        guard let checksum = PageChecksum(formatVersion: formatVersion) else {
            preconditionFailure("a meta of format \(formatVersion) was built; decode refuses it and every writer sets its store's")
        }
        return checksum
    }

    /// Bytes written for this meta: the fixed part, the run list and the carried free pages.
    var byteCount: Int { MetaPage.encodedSize + 8 * pageRuns.count + CarriedFreePages.blockByteCount(words: carried.wordCount) }

    /// The format the next meta after this one is written in: this one's, but format 1, which a
    /// writer's first open upgrades to 2 (`WriterRecovery`). Formats never change in place
    /// otherwise (`PageLayout`): a format-3 store stays format 3, so that a process still running
    /// a build that knows only formats 1...3 keeps reading and writing it.
    var writtenFormat: UInt32 { formatVersion == 1 ? PageChecksum.multiplyXorshift.formatVersion : formatVersion }

    /// Whether metas of this format carry free pages (`carried`); older ones keep every free page
    /// in the free tree.
    static func carriesFreePages(formatVersion: UInt32) -> Bool { formatVersion >= 4 }

    enum DecodeFailure: Error, Equatable {
        case notAStore
        case unsupportedVersion(UInt32)
        case invalid(String)
    }

    /// Decodes and validates the fixed part of a meta from a private copy of its bytes (never
    /// straight from the mapping: the writer may be rewriting it). `pageRuns` stays empty.
    static func decode(_ bytes: UnsafeRawBufferPointer, slot: UInt64) -> Result<MetaPage, DecodeFailure> {
        guard bytes.count >= encodedSize, let base = bytes.baseAddress else { return .failure(.invalid("short meta")) }
        guard base.loadUnaligned(fromByteOffset: Offset.magic, as: UInt64.self) == PageLayout.magic else { return .failure(.notAStore) }
        let version = base.loadUnaligned(fromByteOffset: Offset.formatVersion, as: UInt32.self)
        let checksumOffset = version == 1 ? Offset.legacyChecksum : Offset.checksum
        let stored = base.loadUnaligned(fromByteOffset: checksumOffset, as: UInt64.self)
        guard stored == Checksum.hash(base, count: checksumOffset) else { return .failure(.invalid("meta \(slot) checksum mismatch")) }
        guard PageChecksum(formatVersion: version) != nil else { return .failure(.unsupportedVersion(version)) }
        guard base.loadUnaligned(fromByteOffset: Offset.slot, as: UInt64.self) == slot,
              base.load(fromByteOffset: PageLayout.kindOffset, as: UInt8.self) == PageKind.meta.rawValue else {
            return .failure(.invalid("meta \(slot) header is wrong"))
        }
        let pageSize = Int(base.loadUnaligned(fromByteOffset: Offset.pageSize, as: UInt32.self))
        guard PageLayout.isValidPageSize(pageSize) else { return .failure(.invalid("page size \(pageSize)")) }
        let meta = MetaPage(transactionID: base.loadUnaligned(fromByteOffset: Offset.transactionID, as: UInt64.self),
                            pageSize: pageSize,
                            catalog: TreeRecord(decoding: base + Offset.catalog),
                            freeTree: TreeRecord(decoding: base + Offset.freeTree),
                            pageCount: base.loadUnaligned(fromByteOffset: Offset.pageCount, as: UInt64.self),
                            commitTime: base.loadUnaligned(fromByteOffset: Offset.commitTime, as: UInt64.self),
                            formatVersion: version)
        guard meta.transactionID % 2 == slot || meta.transactionID == 0, meta.transactionID <= MetaPage.largestTransactionID else {
            return .failure(.invalid("meta \(slot) holds transaction \(meta.transactionID)"))
        }
        guard meta.pageCount >= PageLayout.metaPageCount, meta.pageCount < PageLayout.maximumPageCount else {
            return .failure(.invalid("page count \(meta.pageCount)"))
        }
        if let problem = meta.catalog.validate(pageCount: meta.pageCount) ?? meta.freeTree.validate(pageCount: meta.pageCount) {
            return .failure(.invalid(problem))
        }
        return .success(meta)
    }

    /// The run count a format-2 or later meta's fixed part announces (0 for format 1), bounded by the page
    /// size: how many bytes `decodingRuns` needs.
    static func runListByteCount(_ header: UnsafeRawBufferPointer, pageSize: Int) -> Int {
        guard header.count >= encodedSize, header.loadUnaligned(fromByteOffset: Offset.formatVersion, as: UInt32.self) != 1 else { return 0 }
        let count = Int(header.loadUnaligned(fromByteOffset: Offset.runCount, as: UInt32.self))
        return 8 * min(count, runCapacity(pageSize: pageSize))
    }

    /// Where a meta's carried block starts and how long it is, from its decoded fixed part
    /// (`header`): nil if the counts do not fit in the page (`decodingCarried` reports that),
    /// (offset, 0) when it carries nothing.
    static func carriedBlock(_ header: UnsafeRawBufferPointer, pageSize: Int) -> (offset: Int, count: Int)? {
        guard header.count >= encodedSize,
              carriesFreePages(formatVersion: header.loadUnaligned(fromByteOffset: Offset.formatVersion, as: UInt32.self)) else {
            return (encodedSize, 0)
        }
        let runs = Int(header.loadUnaligned(fromByteOffset: Offset.runCount, as: UInt32.self))
        let words = Int(header.loadUnaligned(fromByteOffset: Offset.carriedWordCount, as: UInt32.self))
        guard words <= CarriedFreePages.wordCapacity(pageSize: pageSize), runs <= runCapacity(pageSize: pageSize, carriedWords: words) else {
            return nil
        }
        return (encodedSize + 8 * runs, CarriedFreePages.blockByteCount(words: words))
    }

    /// Reads and validates the carried free pages of a meta whose fixed part decoded into `self`
    /// (`bytes` from the meta's start, holding at least up to the block's end, see
    /// `carriedBlock`).
    func decodingCarried(_ bytes: UnsafeRawBufferPointer) -> Result<MetaPage, DecodeFailure> {
        guard MetaPage.carriesFreePages(formatVersion: formatVersion) else { return .success(self) }
        guard let block = MetaPage.carriedBlock(bytes, pageSize: pageSize), bytes.count >= block.offset + block.count else {
            return .failure(.invalid("meta \(transactionID % 2) carries more free pages than its page holds"))
        }
        let words = Int(bytes.loadUnaligned(fromByteOffset: Offset.carriedWordCount, as: UInt32.self))
        let slice = UnsafeRawBufferPointer(rebasing: bytes[block.offset..<(block.offset + block.count)])
        switch CarriedFreePages.decode(slice, words: words, transactionID: transactionID, pageCount: pageCount, pageSize: pageSize) {
        case .success(let list):
            var decoded = self
            decoded.carried = list
            return .success(decoded)
        case .failure(let malformed):
            return .failure(.invalid("meta \(transactionID % 2): \(malformed.reason)"))
        }
    }

    /// Copies the carried block of a meta whose fixed part decoded into `self` (`header`, a
    /// private copy) from `slot` (the meta page in the mapping, which the writer may be
    /// rewriting) into `carriedCopy`, without decoding it; nil if the counts do not fit the page
    /// or the copy fails its checksum (seeded by the transaction id: torn, or the slot already
    /// holds a newer meta). Only format 4 carries a block.
    func copyingCarried(header: UnsafeRawBufferPointer, slot: UnsafeRawPointer) -> MetaPage? {
        guard let block = MetaPage.carriedBlock(header, pageSize: pageSize) else { return nil }
        guard block.count > 0 else { return self }
        let words = block.count / 8
        let copy = [UInt64](unsafeUninitializedCapacity: words) { buffer, count in
            memcpy(buffer.baseAddress!, slot + block.offset, block.count)
            count = words
        }
        let intact = copy.withUnsafeBytes { raw in
            raw.load(as: UInt64.self) == Checksum.hash(raw.baseAddress! + 8, count: block.count - 8,
                                                       seed: CarriedFreePages.checksumSeed(transactionID))
        }
        guard intact else { return nil }
        var copied = self
        copied.carriedCopy = copy
        return copied
    }

    /// Reads and validates the run list of a meta whose fixed part decoded into `self`: checksum,
    /// runs inside the file's pages, in order, not overlapping, at most `verifiedPageLimit` pages.
    func decodingRuns(_ bytes: UnsafeRawBufferPointer) -> Result<MetaPage, DecodeFailure> {
        guard formatVersion != 1, let base = bytes.baseAddress else { return .success(self) }
        let count = Int(base.loadUnaligned(fromByteOffset: Offset.runCount, as: UInt32.self))
        guard count <= MetaPage.runCapacity(pageSize: pageSize), bytes.count >= MetaPage.encodedSize + 8 * count else {
            return .failure(.invalid("meta \(transactionID % 2) names \(count) page runs"))
        }
        let list = base + Offset.runList
        guard base.loadUnaligned(fromByteOffset: Offset.runChecksum, as: UInt64.self)
                == Checksum.hash(base + Offset.pageDigest, count: 8 + 8 * count, seed: Checksum.seed ^ transactionID) else {
            return .failure(.invalid("meta \(transactionID % 2) page list checksum mismatch"))
        }
        var decoded = self
        decoded.pageDigest = base.loadUnaligned(fromByteOffset: Offset.pageDigest, as: UInt64.self)
        decoded.pageRuns.reserveCapacity(count)
        var next = PageLayout.metaPageCount
        var total: UInt64 = 0
        for index in 0..<count {
            let word = list.loadUnaligned(fromByteOffset: 8 * index, as: UInt64.self)
            let run = PageRun(first: word >> 24, count: word & 0xFF_FFFF)
            total += run.count
            guard run.count > 0, run.first >= next, run.first + run.count <= pageCount,
                  total <= MetaPage.verifiedPageLimit(pageSize: pageSize) else {
                return .failure(.invalid("meta \(transactionID % 2) page run \(index) (\(run.first), \(run.count) pages) is out of place"))
            }
            next = run.first + run.count
            decoded.pageRuns.append(run)
        }
        return .success(decoded)
    }

    /// `slot` is the meta page written (0 or 1); it defaults to `transactionID % 2`. Only a new
    /// store writes generation 0 into both slots. Writes `byteCount` bytes; the caller's buffer
    /// must hold them.
    func encode(into base: UnsafeMutableRawPointer, slot: UInt64? = nil) {
        memset(base, 0, byteCount)
        let slot = slot ?? transactionID % 2
        base.storeBytes(of: slot, toByteOffset: Offset.slot, as: UInt64.self)
        base.storeBytes(of: transactionID, toByteOffset: Offset.writtenBy, as: UInt64.self)
        base.storeBytes(of: PageKind.meta.rawValue, toByteOffset: PageLayout.kindOffset, as: UInt8.self)
        base.storeBytes(of: PageLayout.magic, toByteOffset: Offset.magic, as: UInt64.self)
        precondition(formatVersion >= 2 && formatVersion <= PageLayout.formatVersion, "metas are written in format 2 or later")
        precondition(carried.isEmpty || MetaPage.carriesFreePages(formatVersion: formatVersion), "a format-\(formatVersion) meta carries no free pages")
        base.storeBytes(of: formatVersion, toByteOffset: Offset.formatVersion, as: UInt32.self)
        base.storeBytes(of: UInt32(pageSize), toByteOffset: Offset.pageSize, as: UInt32.self)
        base.storeBytes(of: transactionID, toByteOffset: Offset.transactionID, as: UInt64.self)
        catalog.encode(into: base + Offset.catalog)
        freeTree.encode(into: base + Offset.freeTree)
        base.storeBytes(of: pageCount, toByteOffset: Offset.pageCount, as: UInt64.self)
        base.storeBytes(of: commitTime, toByteOffset: Offset.commitTime, as: UInt64.self)
        base.storeBytes(of: UInt32(pageRuns.count), toByteOffset: Offset.runCount, as: UInt32.self)
        let list = base + Offset.runList
        for (index, run) in pageRuns.enumerated() {
            list.storeBytes(of: run.first << 24 | run.count, toByteOffset: 8 * index, as: UInt64.self)
        }
        base.storeBytes(of: pageDigest, toByteOffset: Offset.pageDigest, as: UInt64.self)
        base.storeBytes(of: Checksum.hash(base + Offset.pageDigest, count: 8 + 8 * pageRuns.count, seed: Checksum.seed ^ transactionID),
                        toByteOffset: Offset.runChecksum, as: UInt64.self)
        base.storeBytes(of: UInt32(carried.wordCount), toByteOffset: Offset.carriedWordCount, as: UInt32.self)
        carried.encode(into: list + 8 * pageRuns.count, transactionID: transactionID)
        base.storeBytes(of: Checksum.hash(base, count: Offset.checksum), toByteOffset: Offset.checksum, as: UInt64.self)
    }

    /// The meta of a brand-new store: generation 0, two empty trees, only the meta pages in use.
    static func initial(pageSize: Int, formatVersion: UInt32 = PageLayout.formatVersion) -> MetaPage {
        MetaPage(transactionID: 0, pageSize: pageSize, catalog: TreeRecord(), freeTree: TreeRecord(),
                 pageCount: PageLayout.metaPageCount, commitTime: 0, formatVersion: formatVersion)
    }
}
