import Foundation
import Testing
@testable import StrataCore

/// A put that replaces an inline value with one of the same length rewrites the value bytes in
/// place (no node moves), on the descent path and on the remembered-leaf path; any other
/// replacement removes the node and inserts it again.
@Suite struct InPlaceReplaceTests {
    /// The heap offsets of the nodes of the tree's root leaf.
    private static func offsets(_ tx: WriteTransaction, _ t: Tree) throws -> [Int] {
        let record = try tx.record(of: t)
        #expect(record.depth == 1)
        let page = try tx.access.page(record.root)
        return try (0..<page.count).map { try page.nodeOffset($0) }
    }

    @Test func aValueOfTheSameLengthIsRewrittenWhereItIs() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        try db.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<20 { try tx.put(String(format: "k%02d", i), "value \(i % 10)", in: t) }
        }
        try db.write { tx in
            let t = try tx.tree("t")
            let before = try Self.offsets(tx, t)
            try tx.put("k05", "VALUE 5", in: t) // a descent (nothing remembered yet in this transaction)
            #expect(try Self.offsets(tx, t) == before)
            try tx.put("k05", "Value 5", in: t) // the leaf the last put remembered
            try tx.put("k06", "Value 6", in: t)
            #expect(try Self.offsets(tx, t) == before)
            #expect(try tx.string("k05", in: t) == "Value 5")
            #expect(try tx.string("k06", in: t) == "Value 6")
            try tx.put("k07", "longer value 7", in: t) // another length: the node moves
            #expect(try Self.offsets(tx, t) != before)
            #expect(try tx.count(t) == 20)
        }
        try db.read { tx in
            let t = try tx.tree("t")
            #expect(try tx.string("k05", in: t) == "Value 5")
            #expect(try tx.string("k06", in: t) == "Value 6")
            #expect(try tx.string("k07", in: t) == "longer value 7")
            #expect(try tx.string("k08", in: t) == "value 8")
        }
        #expect(try db.check().isClean)
    }
}
