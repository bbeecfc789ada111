/// The hash a store's page checksums use (the `checksum` field of every tree page and overflow
/// run). It is fixed for the life of a data file by the format version of its metas (the rule is
/// written down in `PageLayout`): formats 1 and 2 use `Checksum`, formats 3 and 4 `FoldedMultiplyHash`.
/// Both metas of a file always name the same one (`MetaReader` refuses a file whose metas
/// disagree), so a handle learns it once, at open.
enum PageChecksum: Sendable, Equatable {
    /// Formats 1 and 2: `Checksum` (multiply-xorshift, 8 bytes per step).
    case multiplyXorshift
    /// Formats 3 and 4: `FoldedMultiplyHash` (one 64 x 64 -> 128 multiply per 16 bytes, ~2.6x cheaper).
    case foldedMultiply

    /// The page checksum of a store whose meta has `formatVersion` (nil: a version this build
    /// does not know).
    init?(formatVersion: UInt32) {
        switch formatVersion {
        case 1, 2: self = .multiplyXorshift
        case 3, 4: self = .foldedMultiply
        default: return nil
        }
    }

    /// The newest format version a store with these page checksums can be in (a format-1 store
    /// becomes format 2 when a writer first opens it: same pages, metas with a page list). A
    /// format-3 store stays format 3: its metas are written in the format of the meta they follow
    /// (`MetaPage.writtenFormat`), never upgraded in place.
    var formatVersion: UInt32 {
        switch self {
        case .multiplyXorshift: 2
        case .foldedMultiply: 4
        }
    }

    /// The checksum of the page or overflow run of `byteCount` bytes at `base`: a hash of bytes
    /// 24..<byteCount seeded by the page number and transaction id (bytes 0..<16).
    @inline(__always)
    func of(_ base: UnsafeRawPointer, byteCount: Int) -> UInt64 {
        let seed = base.loadUnaligned(as: UInt64.self) ^ (base.loadUnaligned(fromByteOffset: 8, as: UInt64.self) &* 31)
        let body = base + PageLayout.kindOffset
        let count = byteCount - PageLayout.kindOffset
        switch self {
        case .multiplyXorshift: return Checksum.hash(body, count: count, seed: seed)
        case .foldedMultiply: return FoldedMultiplyHash.hash(body, count: count, seed: seed)
        }
    }
}
