import Testing
import StrataTestFixtures
@testable import StrataCore

/// Tree names are the catalog's keys, compared by their UTF-8 bytes. Swift's `==` calls
/// canonically equivalent strings equal — "\u{212B}" (ANGSTROM SIGN) and "A\u{30A}" (A and a
/// combining ring), both three bytes — so every cache or list of open trees must compare bytes
/// too, or one tree's state is handed out for the other's.
@Suite struct TreeNameBytesTests {
    static let sign = "\u{212B}", composed = "A\u{30A}"

    @Test func equivalentNamesAreTwoTreesInOneWriteTransaction() throws {
        #expect(Self.sign == Self.composed && Array(Self.sign.utf8) != Array(Self.composed.utf8))
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            try tx.put("k", "sign", in: try tx.createTree(Self.sign))
            try tx.put("k", "composed", in: try tx.openOrCreateTree(Self.composed))
        }
        try db.read { tx throws in
            #expect(try tx.treeNames().count == 2)
            #expect(try tx.string("k", in: tx.tree(Self.sign)) == "sign")
            #expect(try tx.string("k", in: tx.tree(Self.composed)) == "composed")
        }
        // The next write transaction opens them from the writer's memory of the catalog.
        try db.write { tx throws in
            #expect(try tx.string("k", in: tx.tree(Self.composed)) == "composed")
            #expect(try tx.string("k", in: tx.tree(Self.sign)) == "sign")
        }
    }

    @Test func aReadersCacheOfOneNameDoesNotAnswerForTheOther() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "sign", in: try tx.createTree(Self.sign)) }
        try db.read { tx throws in
            #expect(try tx.string("k", in: tx.tree(Self.sign)) == "sign")
            #expect(try tx.treeIfPresent(Self.composed) == nil)
        }
        try db.read { tx throws in #expect(try tx.treeIfPresent(Self.composed) == nil) }
        #expect(try db.withSnapshot { try $0.get("k", inTree: Self.sign) } != nil)
        #expect(try db.withSnapshot { try $0.get("k", inTree: Self.composed) } == nil)
    }
}

extension TreeNameBytesTests {
    private struct Rollback: Error {}

    /// A handle to "é" (NFC) that a rolled-back nested transaction opened, while "e\u{301}" now
    /// sits at its index: the handle is another transaction's, not a missing tree's. (`==` calls
    /// the two names equal, so a refusal that used it reported `treeNotFound`.)
    @Test func aRolledBackHandleIsRefusedAsAnotherTransactionsEvenForAnEquivalentName() throws {
        let precomposed = "\u{E9}", decomposed = "e\u{301}"
        #expect(precomposed == decomposed && Array(precomposed.utf8) != Array(decomposed.utf8))
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            var stale: Tree?
            do {
                try tx.nested { sub in
                    stale = try sub.createTree(precomposed)
                    throw Rollback()
                }
            } catch is Rollback {}
            let now = try tx.createTree(decomposed)
            #expect(now.index == stale!.index)
            do {
                _ = try tx.count(stale!)
                Issue.record("the rolled-back handle was accepted")
            } catch let StrataError.misuse(message) {
                #expect(message.contains("belongs to another transaction"))
            } catch {
                Issue.record("expected misuse, got \(error)")
            }
        }
    }
}
