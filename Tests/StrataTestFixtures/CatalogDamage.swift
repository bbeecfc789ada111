import Glibc

/// Breaks the newest commit's catalog root in a store's data file, as bit rot would, for tests of
/// what readers and change streams do with a commit they can never read. The byte offsets are
/// the page format's (`MetaPage.Offset.catalog`, `PageLayout.kindOffset`), spelled out here so
/// that tests outside the engine can use it; `CorruptInputTests` pins the format itself.
public enum CatalogDamage {
    /// The catalog record's offset in a meta page (its first field is the root page number).
    static let metaCatalogOffset = 56
    /// The page kind byte's offset in a page header.
    static let pageKindOffset = 24

    /// Overwrites the kind byte of the catalog root named by the meta of `generation` (the
    /// newest) with a value no page has. Best effort: a test that needs it checks the effect.
    public static func breakNewestRootPage(dataPath: String, pageSize: Int, generation: UInt64) {
        let descriptor = open(dataPath, O_RDWR)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var root: UInt64 = 0
        guard pread(descriptor, &root, 8, off_t(Int(generation % 2) * pageSize + metaCatalogOffset)) == 8 else { return }
        var kind: UInt8 = 0xEE
        _ = pwrite(descriptor, &kind, 1, off_t(root * UInt64(pageSize) + UInt64(pageKindOffset)))
    }
}
