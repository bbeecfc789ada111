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
enum PageLayout {
    static let formatVersion: UInt32 = 2
    static let magic: UInt64 = 0x5342_4154_4152_5453 // "STRATABS" little-endian on disk
    static let headerSize = 32
    static let minimumPageSize = 4096
    static let maximumPageSize = 32768 // u16 offsets must address every byte of a page
    static let metaPageCount: UInt64 = 2
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
