import Foundation
import Testing
@_spi(Testing) @testable import StrataCore

/// Where a commit's pages go (`PageAllocator.nextSinglePage`) and how loaded free-list records
/// join the reusable pages (`PageAllocator.addReusable`).
@Suite struct PageRunTests {
    /// The runs the newest commit wrote, as its meta names them.
    func newestRuns(_ db: Database, path: String) throws -> [MetaPage.PageRun] {
        let slot = db.generation % 2
        let bytes = try readFile(path + "/data", at: slot * 4096, count: 4096)
        let meta = try bytes.withUnsafeBytes { raw in try MetaPage.decode(raw, slot: slot).get().decodingRuns(raw).get() }
        #expect(meta.transactionID == db.generation)
        return meta.pageRuns
    }

    /// One-put commits on a store whose free pages are scattered (a random fill) settle into
    /// runs: their pages come back in runs of several pages (one `pwritev` each) instead of one
    /// write per page, and the file grows by at most the session's budget.
    @Test func smallCommitsSettleIntoRuns() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        var generator = SeededGenerator(seed: 7)
        let value = [UInt8](repeating: 0x5A, count: 100)
        for _ in 0..<20 {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                for _ in 0..<500 { try tx.put(String(format: "key %09d", generator.next() % 1_000_000_000), value, in: t) }
            }
        }
        let filled = try db.check()
        #expect(filled.freePages > 16, "the random fill leaves free pages to reuse")
        var runs: [Int] = []
        var pages: [UInt64] = []
        for i in 0..<90 {
            try db.write { tx in try tx.put(String(format: "next %06d", i), value, in: try tx.tree("t")) }
            let named = try newestRuns(db, path: dir.path)
            runs.append(named.count)
            pages.append(named.reduce(0) { $0 + $1.count })
        }
        let report = try db.check()
        let settled = runs.suffix(30)
        print("[pageRuns] runs per commit, last 30: \(settled.map(String.init).joined(separator: " ")); pages \(pages.suffix(30).reduce(0, +)); file \(filled.pageCount) -> \(report.pageCount) pages")
        #expect(report.isClean, "\(report.problems.prefix(3))")
        #expect(2 * settled.reduce(0, +) <= pages.suffix(30).reduce(0, +), "settled small commits write at least two pages per run")
        #expect(report.pageCount <= filled.pageCount + UInt64(PageAllocator.freshPageBudget(pageCount: filled.pageCount)) + 4)
    }

    /// A budget of zero keeps the old behaviour: no page is taken at the file's end while
    /// reusable ones are on hand (a tiny store never grows for the sake of runs).
    @Test func tinyStoresHaveNoBudget() {
        #expect(PageAllocator.freshPageBudget(pageCount: 20) == 0)
        #expect(PageAllocator.freshPageBudget(pageCount: 3200) == 100)
        #expect(PageAllocator.freshPageBudget(pageCount: 1 << 30) == 256)
    }

    /// `addReusable` keeps `reusable` descending whatever order records come in (ascending
    /// leftovers, freed pages in any order) and refuses a page named twice, leaving the list as
    /// it was.
    @Test func addReusableMergesAndRefusesDuplicates() {
        var generator = SeededGenerator(seed: testSeed("addReusable"))
        for _ in 0..<300 {
            var allocator = PageAllocator(nextPage: 1 << 20, committedPageCount: 1 << 20, freeTree: TreeRecord(), reuseLimit: 1)
            var model = Set<UInt64>()
            for _ in 0..<Int(generator.next() % 6) {
                var fresh = Set<UInt64>()
                for _ in 0..<Int(generator.next() % 40) { fresh.insert(2 + generator.next() % 500) }
                var record = Array(fresh.subtracting(model))
                switch generator.next() % 3 {
                case 0: record.sort()
                case 1: record.sort(by: >)
                default: record.shuffle(using: &generator)
                }
                let added = allocator.addReusable(record)
                #expect(added)
                model.formUnion(record)
                #expect(allocator.reusable == model.sorted(by: >))
            }
            if let taken = model.randomElement(using: &generator) {
                let before = allocator.reusable
                let again = allocator.addReusable([taken])
                #expect(!again, "a page already reusable")
                let twice = allocator.addReusable([taken + 1_000, taken + 1_000])
                #expect(!twice, "a page listed twice")
                #expect(allocator.reusable == before)
            }
        }
    }
}

/// Copies of pages the writer's last commit wrote come from its own buffers (`LastCommitPages`),
/// and only while those buffers still hold the committed content.
@Suite struct LastCommitPagesTests {
    /// The value of every key `fill` writes: 1,000 bytes, at most 4 a page.
    static let value = [UInt8](repeating: 7, count: 1000)

    /// Creates tree "t" with `count` keys `k00000`... of `value`.
    static func fill(_ db: Database, count: Int) throws {
        try db.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<count { try tx.put(String(format: "k%05d", i), value, in: t) }
        }
    }

    /// One put into "t", committed; returns how many pages it copied from the writer's buffers.
    static func put(_ db: Database, _ key: String, _ text: String) throws -> Int {
        let tx = try db.beginWrite()
        try tx.put(key, text, in: try tx.tree("t"))
        let copies = tx.lastCommitCopies
        try tx.commit()
        return copies
    }

    @Test func smallCommitsCopyTheLastCommitsPagesAndStayCorrect() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        // A tree of more pages than the table keeps.
        let capacity = try #require(db.writer).lastCommitCapacity
        let count = 4 * capacity + 400
        try Self.fill(db, count: count)
        func put(_ key: String, _ text: String) throws -> Int { try Self.put(db, key, text) }
        #expect(try put("k00001", "a") == 0, "the big first commit kept no buffers")
        #expect(try put("k00001", "b") >= 2, "the root and the leaf the last commit wrote")
        // An aborted transaction and a nested rollback leave the committed state, and the table.
        let aborted = try db.beginWrite()
        try aborted.put("k00001", "never", in: try aborted.tree("t"))
        aborted.abort()
        try db.write { tx in
            let t = try tx.tree("t")
            try? tx.nested { sub in
                try sub.put("k00001", "rolled back", in: t)
                throw CancellationError()
            }
        }
        #expect(try put("k00001", "c") >= 2)
        // A commit larger than the table's capacity empties it.
        try db.write { tx in
            let t = try tx.tree("t")
            for i in stride(from: 0, to: count, by: 3) { try tx.put(String(format: "k%05d", i), "big \(i)", in: t) }
        }
        #expect(try put("k00001", "d") == 0)
        #expect(try put("k01999", "e") >= 1)
        try db.read { tx in
            let t = try tx.tree("t")
            #expect(try tx.string("k00001", in: t) == "d")
            #expect(try tx.string("k01999", in: t) == "e")
            #expect(try tx.string("k00006", in: t) == "big 6")
            #expect(try tx.string("k00002", in: t).map { _ in true } == true)
        }
        #expect(try db.check().isClean)
    }

    /// A commit of scattered changes (here ~150 pages: a leaf each and the branches above) is
    /// kept whole, so the next transaction copies the leaves and branches it shares from memory.
    @Test func aCommitOfScatteredChangesIsKept() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        try Self.fill(db, count: 4000)
        try db.write { tx in
            let t = try tx.tree("t")
            for i in stride(from: 0, to: 4000, by: 27) { try tx.put(String(format: "k%05d", i), "scattered \(i)", in: t) }
        }
        let tx = try db.beginWrite()
        let t = try tx.tree("t")
        try tx.put("k00027", "again", in: t)
        try tx.put("k03996", "again", in: t)
        // Two leaves, the root and the branches above them, all written by the commit before.
        #expect(tx.lastCommitCopies >= 4)
        try tx.commit()
        try db.read { tx in
            let t = try tx.tree("t")
            #expect(try tx.string("k00027", in: t) == "again")
            #expect(try tx.string("k00054", in: t) == "scattered 54")
        }
        #expect(try db.check().isClean)
    }

    /// A branch page an earlier commit wrote is copied from memory too, as long as no later
    /// commit wrote its page number (`WriterSession.builtBranch`).
    @Test func branchesOfEarlierCommitsAreCopiedFromMemory() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        try Self.fill(db, count: 4000)
        #expect(try db.read { try $0.record(of: $0.tree("t")).depth } >= 3)
        func put(_ key: String, _ text: String) throws -> Int { try Self.put(db, key, text) }
        _ = try put("k00001", "a") // the path to the first leaf
        _ = try put("k03990", "b") // the path to the last one: the root again, other branches
        // The root from the last commit, the first leaf's branch from the one before.
        #expect(try put("k00002", "c") >= 2)
        // An aborted transaction took the branch out of the table; the copy comes from the file.
        let aborted = try db.beginWrite()
        try aborted.put("k00003", "never", in: try aborted.tree("t"))
        aborted.abort()
        #expect(try put("k03991", "d") >= 1)
        try db.read { tx in
            let t = try tx.tree("t")
            #expect(try tx.string("k00001", in: t) == "a")
            #expect(try tx.string("k00002", in: t) == "c")
            #expect(try tx.get("k00003", in: t)?.bytes == Self.value)
            #expect(try tx.string("k03991", in: t) == "d")
        }
        #expect(try db.check().isClean)
    }
}

