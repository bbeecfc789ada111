/// On-disk constants. Changing any of them changes the file format: bump `formatVersion`.
///
/// Every page starts with a 32-byte header:
///
///     0  u64 page number      (a page copied to the wrong place is detected)
///     8  u64 transaction id   (the commit that wrote it; never newer than the meta that reaches it)
///     16 u64 checksum         (of bytes 24..<end of the page or overflow run, seeded by 0..<16)
///     24 u8  kind             (PageKind)
///     25 u8  flags
///     26 u16 entry count
///     28 u16 lower            (end of the slot array)       \ overflow pages: u32 page count
///     30 u16 upper            (start of the node heap)       /
///
/// B+tree pages are slotted: a sorted array of u16 node offsets grows up from byte 32, nodes are
/// packed down from the end. Invariant: 32 + 2 * count == lower <= upper <= pageSize.
///
/// Format versions (the u32 at byte 40 of each meta, see `MetaPage`):
///
///     1  metas without a page list; page checksums by `Checksum`
///     2  metas with a page list (one sync per commit); page checksums by `Checksum`
///     3  as 2; page checksums by `FoldedMultiplyHash` (~2.4k instructions per 4 KiB page, not ~5.5k)
///     4  as 3; metas also carry the recently freed pages (`CarriedFreePages`), so a small commit
///        leaves the free tree alone
///
/// The rule: the format version of a data file's metas names the hash of every page checksum in
/// that file (`PageChecksum`), and it never changes in place, because a page is rewritten only
/// when a commit changes it: a store created before format 3 stays format 2 (pages and metas) for
/// its whole life, every build from format 3 on reads and writes it as such, and a format-1 store
/// becomes format 2 at its writer's first open (`WriterRecovery`; same pages). Format 4 changes
/// only the metas, yet a format-3 store stays format 3 too (every commit writes its meta in the
/// format of the meta it follows, `MetaPage.writtenFormat`, and carries no free pages): an
/// upgrade in place would make every process still running a build that knows only formats 1...3
/// fail on the store (its readers and standby writers find a meta they cannot read). Formats 2
/// and 3 keep every free page in the free tree. New stores and compacting copies
/// (`Database.copy(to:compact: true)`, `strata copy --compact`, which rebuild every page: the way
/// to move an older store to format 4) are format 4; a page copy keeps its source's format, and
/// `load` writes into a store in that store's format. Both metas of a file therefore name the
/// same page checksum (a format-3 store that a build of format 4 upgraded in place before this
/// rule, with metas 3 and 4 side by side, is read as the format of its newest meta); a file whose
/// metas disagree on the page checksum is refused as corrupt (`MetaReader`). The metas' own
/// checksums use `Checksum` in every format, so a build that knows only older formats still
/// validates a newer meta and refuses the store with `unsupportedFormat` instead of calling it
/// corrupt.
enum PageLayout {
    /// The format new stores are written in, and the newest this build reads (it reads 1...4).
    static let formatVersion: UInt32 = 4
    static let magic: UInt64 = 0x5342_4154_4152_5453 // "STRATABS" little-endian on disk
    static let headerSize = 32
    static let minimumPageSize = 4096
    static let maximumPageSize = 32768 // u16 offsets must address every byte of a page
    static let metaPageCount: UInt64 = 2
    /// The most pages a store holds (page numbers stay below it): the allocator refuses to grow
    /// past it, and a meta naming more is refused (`pageCount * pageSize` stays far from
    /// overflowing at any page size).
    static let maximumPageCount: UInt64 = 1 << 40
    /// Deeper than any real tree (a 4 KiB-page tree of depth 32 would hold more than 2^64 keys):
    /// reaching it means the file contains a cycle.
    static let maximumDepth = 32

    static let pageNumberOffset = 0
    static let transactionOffset = 8
    static let checksumOffset = 16
    static let kindOffset = 24
    static let flagsOffset = 25
    static let countOffset = 26
    static let lowerOffset = 28
    static let upperOffset = 30
    static let overflowCountOffset = 28

    /// Leaf node: u8 flags, u8 reserved, u16 key length, u32 value length, key, value (or a u64
    /// overflow page number when `LeafFlags.overflow` is set).
    static let leafNodeHeader = 8
    /// Branch node: u64 child page, u16 key length, key. The first key of a branch is ignored
    /// (conceptually minus infinity) and stored empty.
    static let branchNodeHeader = 10

    static let maximumValueSize = Int(Int32.max)

    /// The largest key: a quarter page. Node sizes are capped at a third of the usable space
    /// (`maximumNodeSize`) so that any full page plus one node can always be split in two halves
    /// that each fit; a maximum key plus headers and an overflow reference stays below that cap.
    static func maximumKeySize(pageSize: Int) -> Int { pageSize / 4 }

    static func maximumNodeSize(pageSize: Int) -> Int { (pageSize - headerSize) / 3 }

    static func isValidPageSize(_ size: Int) -> Bool {
        size >= minimumPageSize && size <= maximumPageSize && size & (size - 1) == 0
    }
}

enum PageKind: UInt8 {
    case meta = 1
    case branch = 2
    case leaf = 3
    case overflow = 4
}

enum LeafFlags {
    static let overflow: UInt8 = 1
}
