import Foundation
import Testing
@_spi(Testing) @testable import StrataCore

/// The single-page policy (`PageAllocator.nextSinglePage`) against a model of the free pages, and
/// the file-size bound it keeps under commits shaped like group commits.
@Suite struct PageAllocatorModelTests {
    /// Random reusable sets (runs and scattered pages), random budgets, pages handed out and
    /// freed again at random (as `freePages` does with a transaction's own pages): every page
    /// handed out is reusable in the model or the next one at the file's end, none is handed
    /// out twice while in use, the file's end is passed over reusable pages only with a budget,
    /// and `reusable` stays strictly descending.
    @Test func noPageIsHandedOutTwice() {
        var generator = SeededGenerator(seed: testSeed("pageAllocatorModel"))
        for _ in 0..<250 {
            var free = Set<UInt64>()
            var page: UInt64 = 2
            for _ in 0..<Int(generator.next() % 40) {
                page += 1 + generator.next() % 6
                for offset in 0..<(generator.next() % 9) { free.insert(page + offset) }
                page += 9
            }
            let fileEnd = page + 1 + generator.next() % 4
            var allocator = PageAllocator(nextPage: fileEnd, committedPageCount: fileEnd, freeTree: TreeRecord(), reuseLimit: 1)
            let loaded = allocator.addReusable(Array(free))
            #expect(loaded)
            var inUse = Set<UInt64>()
            for _ in 0..<Int(1 + generator.next() % 120) {
                if !inUse.isEmpty && generator.next() % 5 == 0 {
                    let back = inUse.randomElement(using: &generator)!
                    inUse.remove(back)
                    let added = allocator.addReusable([back])
                    #expect(added, "a page freed back is not reusable twice")
                    free.insert(back)
                    continue
                }
                let budget = generator.next() % 3 == 0 ? 0 : Int(generator.next() % 8)
                let wasEmpty = allocator.reusable.isEmpty
                let (reused, usesBudget) = allocator.nextSinglePage(freshBudget: budget)
                let handed: UInt64
                if let reused {
                    #expect(free.contains(reused), "page \(reused) was not reusable")
                    #expect(!usesBudget)
                    free.remove(reused)
                    handed = reused
                } else {
                    #expect(wasEmpty || (usesBudget && budget > 0), "the file's end passed over reusable pages without a budget")
                    handed = allocator.nextPage
                    allocator.nextPage += 1
                    allocator.runEnd = allocator.nextPage
                }
                #expect(!inUse.contains(handed), "page \(handed) handed out twice")
                inUse.insert(handed)
                #expect(allocator.reusable == free.sorted(by: >))
            }
        }
    }

    /// Commits shaped like a group commit of 11-16 writers, each rewriting one of its own keys,
    /// on a store filled at random (scattered free pages): the data does not grow, so the file
    /// grows only by the session's run budget (`PageAllocator.freshPageBudget`) plus the pages
    /// of the commits whose freed pages are not reusable yet; the store checks clean. Prints the
    /// runs per commit the metas name (one `pwritev` each, cut at 16 KiB).
    @Test func groupShapedCommitsKeepTheFileBounded() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        var generator = SeededGenerator(seed: testSeed("groupShapedCommits"))
        let value = [UInt8](repeating: 0x5A, count: 100)
        try db.write { tx in
            let t = try tx.createTree("t")
            for index in (0..<16 * 50).shuffled(using: &generator) { try tx.put(String(format: "%02d-%03d", index / 50, index % 50), value, in: t) }
        }
        for _ in 0..<10 {
            try db.write { tx in
                let t = try tx.tree("t")
                for _ in 0..<100 { try tx.put(String(format: "%02d-%03d", generator.next() % 16, generator.next() % 50), value, in: t) }
            }
        }
        let filled = try db.check()
        var runs: [Int] = []
        var pages: [UInt64] = []
        for round in 0..<300 {
            let writers = 16 - Int(generator.next() % 6)
            try db.write { tx in
                let t = try tx.tree("t")
                for writer in 0..<writers { try tx.put(String(format: "%02d-%03d", writer, round % 50), value, in: t) }
            }
            let named = try PageRunTests().newestRuns(db, path: dir.path)
            runs.append(named.count)
            pages.append(named.reduce(0) { $0 + $1.count })
        }
        let report = try db.check()
        let largest = pages.max() ?? 0
        print("[groupShapedCommits] runs per commit, last 100: mean \(Double(runs.suffix(100).reduce(0, +)) / 100), pages per commit mean \(Double(pages.suffix(100).reduce(0, +)) / 100); file \(filled.pageCount) -> \(report.pageCount) pages")
        #expect(report.isClean, "\(report.problems.prefix(3))")
        let bound = filled.pageCount + UInt64(PageAllocator.freshPageBudget(pageCount: report.pageCount)) + 3 * largest
        #expect(report.pageCount <= bound, "file grew from \(filled.pageCount) to \(report.pageCount) pages (bound \(bound))")
    }
}
