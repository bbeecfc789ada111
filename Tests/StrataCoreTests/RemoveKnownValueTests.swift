import Foundation
import Testing
@testable import StrataCore

/// `remove(from:key:knownValue:)`, the free list's removal of the record its cursor just read:
/// the entry the descent reaches must hold the value the cursor saw, else the tree is damaged
/// (a key held twice) and the removal is refused with a typed error, instead of deleting another
/// entry while the loaded record stays.
@Suite struct RemoveKnownValueTests {
    @Test func theEntryRemovedMustHoldTheValueTheCallerRead() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let tree = try tx.createTree("t")
            for i in 0..<2_000 { try tx.put(String(format: "k%05d", i), "value \(i)", in: tree) }
        }
        let tx = try db.beginWrite()
        var record = try tx.record(of: try tx.tree("t"))
        let key = Array("k01234".utf8)
        #expect(throws: StrataError.self) {
            _ = try key.withUnsafeBytes { key in
                try Array("value 1235".utf8).withUnsafeBytes { try tx.remove(from: &record, key: key, knownValue: $0) }
            }
        }
        tx.abort()
        let retry = try db.beginWrite()
        var fresh = try retry.record(of: try retry.tree("t"))
        let removed = try key.withUnsafeBytes { key in
            try Array("value 1234".utf8).withUnsafeBytes { try retry.remove(from: &fresh, key: key, knownValue: $0) }
        }
        #expect(removed)
        #expect(fresh.entries == 1_999)
        retry.abort()
    }
}
