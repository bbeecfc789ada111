/// The key of a free-tree record (see `PageAllocator`): `freedBy` u64 BE, `writer` u64 BE,
/// `chunk` u32 BE, 20 bytes, so byte order is numeric order on `freedBy` first. This type builds
/// the keys and parses the stored ones; nothing else knows their layout.
///
/// Built on the stack: a heap-allocated array per key was a visible share of small commits.
struct FreeRecordKey: BytesConvertible {
    /// Every free-tree key is this long.
    static let size = 20
    private static let freedByOffset = 0, writerOffset = 8, chunkOffset = 16

    /// A homogeneous tuple is laid out contiguously; the key is its first `size` bytes.
    private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)

    init(freedBy: UInt64, writer: UInt64, chunk: UInt32) {
        withUnsafeMutableBytes(of: &words) { raw in
            raw.storeBytes(of: freedBy.bigEndian, toByteOffset: FreeRecordKey.freedByOffset, as: UInt64.self)
            raw.storeBytes(of: writer.bigEndian, toByteOffset: FreeRecordKey.writerOffset, as: UInt64.self)
            raw.storeBytes(of: chunk.bigEndian, toByteOffset: FreeRecordKey.chunkOffset, as: UInt32.self)
        }
    }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(of: words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<FreeRecordKey.size])) }
    }

    /// Whether a stored key has the length of a free-tree key.
    static func isWellFormed(_ key: UnsafeRawBufferPointer) -> Bool { key.count == size }

    /// The transaction that freed the pages of the record stored under `key`.
    /// - Throws: `StrataError.corruptPage` (naming the root of `freeTree`) if `key` is not a
    ///   free-tree key.
    static func freedBy(of key: UnsafeRawBufferPointer, in freeTree: TreeRecord) throws -> UInt64 {
        guard isWellFormed(key) else {
            throw StrataError.corruptPage(page: freeTree.root, reason: "free-tree key of \(key.count) bytes")
        }
        return UInt64(bigEndian: key.loadUnaligned(fromByteOffset: freedByOffset, as: UInt64.self))
    }
}
