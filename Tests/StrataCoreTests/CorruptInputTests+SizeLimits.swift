import Foundation
import Glibc
import Testing
@testable import StrataCore

/// Sizes read from the file that no store reaches: refused with a typed error before any
/// arithmetic on them can overflow (an overflow traps: a crash, not an error).
extension CorruptInputTests {
    /// A meta naming 2^40 pages or more (the allocator's own limit) is invalid: at 32 KiB pages,
    /// 2^47 pages made `pageCount * pageSize` and the mapping's doubling overflow.
    @Test func aMetaNamingMorePagesThanAStoreHoldsIsInvalid() throws {
        for (pageCount, valid) in [(PageLayout.maximumPageCount - 1, true), (PageLayout.maximumPageCount, false), (1 << 47, false)] {
            var meta = MetaPage.initial(pageSize: 32768)
            meta.transactionID = 2
            meta.pageCount = pageCount
            var bytes = [UInt8](repeating: 0, count: 32768)
            bytes.withUnsafeMutableBytes { meta.encode(into: $0.baseAddress!) }
            let decoded = bytes.withUnsafeBytes { MetaPage.decode($0, slot: 0) }
            if case .success = decoded { #expect(valid, "\(pageCount) pages") } else { #expect(!valid, "\(pageCount) pages") }
        }
    }

    /// A mapping asked to cover more than any mapping can (a sparse data file past 2^62 bytes
    /// gives such a length at open) throws EFBIG instead of overflowing while it doubles it.
    /// (Before the fix this trapped; it was not run then, a trap ends the whole test process.)
    @Test func aMappingLengthThatWouldOverflowIsATypedError() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) { db.close() } }
        for length in [1 << 62, Int.max, Int.max / 2 + 1] {
            #expect(performing: { _ = try db.mapping.base(covering: length) }, throws: { error in
                guard case StrataError.io(_, _, EFBIG) = error else { return false }
                return true
            })
        }
        #expect(try db.mapping.reservation(covering: 3 << 30) == 6 << 30)
        #expect(try db.mapping.reservation(covering: 1) == 1 << 30)
    }
}
