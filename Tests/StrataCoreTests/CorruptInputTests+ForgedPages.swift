import Foundation
import Testing
@testable import StrataCore

/// What the forged-page tests share: a tree "t" of depth 2 and the means to read a committed page
/// of the data file, read its slots and branch nodes, and write it back forged with its checksum
/// resealed (so the forgery is not caught as a torn page but reaches the code under test).
extension CorruptInputTests {
    struct ForgeablePages {
        let data: String
        let pageSize: Int
        let checksum: PageChecksum

        func read(_ number: UInt64) throws -> [UInt8] { try readFile(data, at: number * UInt64(pageSize), count: pageSize) }

        /// Reseals `page`'s checksum and writes it over page `number` of the file.
        func write(_ page: [UInt8], at number: UInt64) throws {
            var page = page
            let sum = page.withUnsafeBytes { checksum.of($0.baseAddress!, byteCount: pageSize) }
            withUnsafeBytes(of: sum) { page.replaceSubrange(PageLayout.checksumOffset..<PageLayout.checksumOffset + 8, with: $0) }
            try patchFile(data, at: number * UInt64(pageSize), page)
        }

        /// The offset of the node that slot `index` of `page` names.
        static func slot(_ index: Int, of page: [UInt8]) -> Int {
            load16(page, PageLayout.headerSize + 2 * index)
        }

        static func load16(_ page: [UInt8], _ offset: Int) -> Int {
            Int(page[offset..<offset + 2].withUnsafeBytes { $0.loadUnaligned(as: UInt16.self) })
        }

        static func store16(_ value: Int, _ page: inout [UInt8], _ offset: Int) {
            withUnsafeBytes(of: UInt16(value)) { page.replaceSubrange(offset..<offset + 2, with: $0) }
        }

        /// Branch node `index` of `page` (a branch node: u64 child, u16 key length, key).
        static func branchNode(_ index: Int, of page: [UInt8]) -> (offset: Int, child: UInt64, key: [UInt8]) {
            let start = slot(index, of: page)
            let child = page[start..<start + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let length = load16(page, start + 8)
            return (start, child, Array(page[(start + 10)..<(start + 10 + length)]))
        }
    }

    /// Commits tree "t" of 600 keys (depth 2) in `db`, then a commit in tree "c" so that "t"'s
    /// pages are not the newest commit's (opening would find that commit's pages altered and
    /// open at the one before). Returns "t"'s root and the file's pages.
    func commitDepthTwoTree(_ db: Database) throws -> (root: UInt64, pages: ForgeablePages) {
        try db.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<600 { try tx.put(String(format: "key %05d", i), "value \(i)", in: t) }
        }
        try db.write { tx in try tx.put("later", "commit", in: try tx.createTree("c")) }
        return try db.read { tx in
            let record = try tx.record(of: try tx.tree("t"))
            try #require(record.depth == 2)
            let pages = ForgeablePages(data: db.path + "/data", pageSize: tx.database.pageSize, checksum: tx.database.pageChecksum)
            return (record.root, pages)
        }
    }
}
