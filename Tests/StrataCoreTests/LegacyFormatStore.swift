import Foundation
@testable import StrataCore

/// Fixture generator for stores created before format 3 (see `PageLayout`): a data file whose
/// two generation-0 metas are format 2, byte for byte what a format-2 Strata created. Every commit
/// a writer makes on it afterwards is written in the store's format, so its pages get format 2's
/// page checksums (`Checksum`), as an older Strata wrote them. With `formatVersion` 3: a new store
/// of a format-3 Strata (`FoldedMultiplyHash` pages, metas that carry no free pages).
enum LegacyFormatStore {
    static func create(at path: String, pageSize: Int = 4096, formatVersion: UInt32 = 2) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        var meta = MetaPage.initial(pageSize: pageSize)
        meta.formatVersion = formatVersion
        var bytes = [UInt8](repeating: 0, count: 2 * pageSize)
        bytes.withUnsafeMutableBytes { raw in
            meta.encode(into: raw.baseAddress!, slot: 0)
            meta.encode(into: raw.baseAddress! + pageSize, slot: 1)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path + "/data"))
    }

    /// The format version in the meta of `slot`.
    static func formatVersion(_ path: String, slot: UInt64, pageSize: Int = 4096) throws -> UInt32 {
        let bytes = try readFile(path + "/data", at: slot * UInt64(pageSize) + UInt64(MetaPage.Offset.formatVersion), count: 4)
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    /// Rewrites the format version of both metas (their checksums resealed, as a forger would).
    static func forgeFormatVersion(_ version: UInt32, _ path: String, slots: [UInt64] = [0, 1], pageSize: Int = 4096) throws {
        for slot in slots {
            let offset = slot * UInt64(pageSize)
            var bytes = try readFile(path + "/data", at: offset, count: MetaPage.encodedSize)
            bytes.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: version, toByteOffset: MetaPage.Offset.formatVersion, as: UInt32.self)
                raw.storeBytes(of: Checksum.hash(raw.baseAddress!, count: MetaPage.checksumOffset),
                               toByteOffset: MetaPage.checksumOffset, as: UInt64.self)
            }
            try patchFile(path + "/data", at: offset, bytes)
        }
    }
}
