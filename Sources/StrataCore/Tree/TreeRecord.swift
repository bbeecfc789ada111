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
    /// Where `lastModified` lives in the encoded record (change streams read only this field).
    static let lastModifiedOffset = 48

    init() {}

    init(decoding base: UnsafeRawPointer) {
        root = base.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        entries = base.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        branchPages = base.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        leafPages = base.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
        overflowPages = base.loadUnaligned(fromByteOffset: 32, as: UInt64.self)
        depth = Int(base.loadUnaligned(fromByteOffset: 40, as: UInt16.self))
        lastModified = base.loadUnaligned(fromByteOffset: TreeRecord.lastModifiedOffset, as: UInt64.self)
        created = base.loadUnaligned(fromByteOffset: 56, as: UInt64.self)
    }

    func encode(into base: UnsafeMutableRawPointer) {
        base.storeBytes(of: root, toByteOffset: 0, as: UInt64.self)
        base.storeBytes(of: entries, toByteOffset: 8, as: UInt64.self)
        base.storeBytes(of: branchPages, toByteOffset: 16, as: UInt64.self)
        base.storeBytes(of: leafPages, toByteOffset: 24, as: UInt64.self)
        base.storeBytes(of: overflowPages, toByteOffset: 32, as: UInt64.self)
        base.storeBytes(of: UInt16(depth), toByteOffset: 40, as: UInt16.self)
        base.storeBytes(of: UInt16(0), toByteOffset: 42, as: UInt16.self)
        base.storeBytes(of: UInt32(0), toByteOffset: 44, as: UInt32.self)
        base.storeBytes(of: lastModified, toByteOffset: TreeRecord.lastModifiedOffset, as: UInt64.self)
        base.storeBytes(of: created, toByteOffset: 56, as: UInt64.self)
    }

    /// A record read from disk must describe a plausible tree before anything follows its root.
    func validate(pageCount: UInt64) -> String? {
        if root == 0 { return depth == 0 && entries == 0 ? nil : "empty tree with depth \(depth) and \(entries) entries" }
        if root < PageLayout.metaPageCount || root >= pageCount { return "root page \(root) outside 2..<\(pageCount)" }
        if depth < 1 || depth > PageLayout.maximumDepth { return "depth \(depth) out of range" }
        return nil
    }
}
