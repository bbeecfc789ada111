/// What the engine knows about one B+tree: its root and statistics. The counters come from disk
/// and are not trusted: they are updated with wrapping arithmetic, and `check()` reports a record
/// whose counts disagree with its pages.
///
/// Stored (64 bytes) in the meta
/// page for the catalog and free trees, and as the value of a catalog entry for each named tree.
///
///     0  u64 root page (0 = empty tree; page 0 is a meta page, never a tree page)
///     8  u64 entries
///     16 u64 branch pages
///     24 u64 leaf pages
///     32 u64 overflow pages
///     40 u16 depth (0 = empty)
///     42 u16 flags (reserved, 0)
///     44 u32 reserved
///     48 u64 last modified: id of the commit that last changed this tree (change filtering)
///     56 u64 created: id of the commit that created this tree
public struct TreeRecord: Equatable, Sendable {
    public internal(set) var root: UInt64 = 0
    public internal(set) var entries: UInt64 = 0
    public internal(set) var branchPages: UInt64 = 0
    public internal(set) var leafPages: UInt64 = 0
    public internal(set) var overflowPages: UInt64 = 0
    public internal(set) var depth: Int = 0
    public internal(set) var lastModified: UInt64 = 0
    public internal(set) var created: UInt64 = 0

    static let encodedSize = 64

    /// Field offsets (the table above); encode and decode use these and nothing else.
    enum Offset {
        static let root = 0
        static let entries = 8
        static let branchPages = 16
        static let leafPages = 24
        static let overflowPages = 32
        static let depth = 40
        static let flags = 42
        static let reserved = 44
        static let lastModified = 48
        static let created = 56
    }
    /// Where `lastModified` lives in the encoded record (change streams read only this field).
    static let lastModifiedOffset = Offset.lastModified

    init() {}

    init(decoding base: UnsafeRawPointer) {
        root = base.loadUnaligned(fromByteOffset: Offset.root, as: UInt64.self)
        entries = base.loadUnaligned(fromByteOffset: Offset.entries, as: UInt64.self)
        branchPages = base.loadUnaligned(fromByteOffset: Offset.branchPages, as: UInt64.self)
        leafPages = base.loadUnaligned(fromByteOffset: Offset.leafPages, as: UInt64.self)
        overflowPages = base.loadUnaligned(fromByteOffset: Offset.overflowPages, as: UInt64.self)
        depth = Int(base.loadUnaligned(fromByteOffset: Offset.depth, as: UInt16.self))
        lastModified = base.loadUnaligned(fromByteOffset: Offset.lastModified, as: UInt64.self)
        created = base.loadUnaligned(fromByteOffset: Offset.created, as: UInt64.self)
    }

    func encode(into base: UnsafeMutableRawPointer) {
        base.storeBytes(of: root, toByteOffset: Offset.root, as: UInt64.self)
        base.storeBytes(of: entries, toByteOffset: Offset.entries, as: UInt64.self)
        base.storeBytes(of: branchPages, toByteOffset: Offset.branchPages, as: UInt64.self)
        base.storeBytes(of: leafPages, toByteOffset: Offset.leafPages, as: UInt64.self)
        base.storeBytes(of: overflowPages, toByteOffset: Offset.overflowPages, as: UInt64.self)
        base.storeBytes(of: UInt16(depth), toByteOffset: Offset.depth, as: UInt16.self)
        base.storeBytes(of: UInt16(0), toByteOffset: Offset.flags, as: UInt16.self)
        base.storeBytes(of: UInt32(0), toByteOffset: Offset.reserved, as: UInt32.self)
        base.storeBytes(of: lastModified, toByteOffset: Offset.lastModified, as: UInt64.self)
        base.storeBytes(of: created, toByteOffset: Offset.created, as: UInt64.self)
    }

    /// A record read from disk must describe a plausible tree before anything follows its root.
    func validate(pageCount: UInt64) -> String? {
        if root == 0 { return depth == 0 && entries == 0 ? nil : "empty tree with depth \(depth) and \(entries) entries" }
        if root < PageLayout.metaPageCount || root >= pageCount { return "root page \(root) outside 2..<\(pageCount)" }
        if depth < 1 || depth > PageLayout.maximumDepth { return "depth \(depth) out of range" }
        return nil
    }
}
