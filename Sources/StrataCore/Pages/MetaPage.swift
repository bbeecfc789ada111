import Glibc

/// The commit record. Pages 0 and 1 hold the two most recent metas; commit N writes page N % 2, so
/// the previous commit's meta is never touched while a new one is written.
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
///     200 u64 checksum of bytes 0..<200
///
/// A torn or bit-rotted meta fails its checksum; opening then uses the other one. Invariant: the
/// file is at least `pageCount * pageSize` bytes long before a meta naming `pageCount` is written.
struct MetaPage: Equatable {
    var transactionID: UInt64
    var pageSize: Int
    var catalog: TreeRecord
    var freeTree: TreeRecord
    var pageCount: UInt64
    var commitTime: UInt64

    static let encodedSize = Offset.checksum + 8

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
        static let checksum = commitTime + 8
    }
    static let checksumOffset = Offset.checksum

    enum DecodeFailure: Error, Equatable {
        case notAStore
        case unsupportedVersion(UInt32)
        case invalid(String)
    }

    /// Decodes and validates a meta from a private copy of its bytes (never straight from the
    /// mapping: the writer may be rewriting it).
    static func decode(_ bytes: UnsafeRawBufferPointer, slot: UInt64) -> Result<MetaPage, DecodeFailure> {
        guard bytes.count >= encodedSize, let base = bytes.baseAddress else { return .failure(.invalid("short meta")) }
        guard base.loadUnaligned(fromByteOffset: Offset.magic, as: UInt64.self) == PageLayout.magic else { return .failure(.notAStore) }
        let version = base.loadUnaligned(fromByteOffset: Offset.formatVersion, as: UInt32.self)
        let stored = base.loadUnaligned(fromByteOffset: checksumOffset, as: UInt64.self)
        guard stored == Checksum.hash(base, count: checksumOffset) else { return .failure(.invalid("meta \(slot) checksum mismatch")) }
        guard version == PageLayout.formatVersion else { return .failure(.unsupportedVersion(version)) }
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
                            commitTime: base.loadUnaligned(fromByteOffset: Offset.commitTime, as: UInt64.self))
        guard meta.transactionID % 2 == slot || meta.transactionID == 0 else {
            return .failure(.invalid("meta \(slot) holds transaction \(meta.transactionID)"))
        }
        guard meta.pageCount >= PageLayout.metaPageCount, meta.pageCount < (1 << 48) else {
            return .failure(.invalid("page count \(meta.pageCount)"))
        }
        if let problem = meta.catalog.validate(pageCount: meta.pageCount) ?? meta.freeTree.validate(pageCount: meta.pageCount) {
            return .failure(.invalid(problem))
        }
        return .success(meta)
    }

    /// `slot` is the meta page written (0 or 1); it defaults to `transactionID % 2`. Only a new
    /// store writes generation 0 into both slots.
    func encode(into base: UnsafeMutableRawPointer, byteCount: Int, slot: UInt64? = nil) {
        memset(base, 0, byteCount)
        let slot = slot ?? transactionID % 2
        base.storeBytes(of: slot, toByteOffset: Offset.slot, as: UInt64.self)
        base.storeBytes(of: transactionID, toByteOffset: Offset.writtenBy, as: UInt64.self)
        base.storeBytes(of: PageKind.meta.rawValue, toByteOffset: PageLayout.kindOffset, as: UInt8.self)
        base.storeBytes(of: PageLayout.magic, toByteOffset: Offset.magic, as: UInt64.self)
        base.storeBytes(of: PageLayout.formatVersion, toByteOffset: Offset.formatVersion, as: UInt32.self)
        base.storeBytes(of: UInt32(pageSize), toByteOffset: Offset.pageSize, as: UInt32.self)
        base.storeBytes(of: transactionID, toByteOffset: Offset.transactionID, as: UInt64.self)
        catalog.encode(into: base + Offset.catalog)
        freeTree.encode(into: base + Offset.freeTree)
        base.storeBytes(of: pageCount, toByteOffset: Offset.pageCount, as: UInt64.self)
        base.storeBytes(of: commitTime, toByteOffset: Offset.commitTime, as: UInt64.self)
        base.storeBytes(of: Checksum.hash(base, count: MetaPage.checksumOffset), toByteOffset: MetaPage.checksumOffset, as: UInt64.self)
    }

    /// The meta of a brand-new store: generation 0, two empty trees, only the meta pages in use.
    static func initial(pageSize: Int) -> MetaPage {
        MetaPage(transactionID: 0, pageSize: pageSize, catalog: TreeRecord(), freeTree: TreeRecord(),
                 pageCount: PageLayout.metaPageCount, commitTime: 0)
    }
}
