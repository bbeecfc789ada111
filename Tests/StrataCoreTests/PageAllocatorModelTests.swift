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

    /// `longestRun` skips the pages it learned hold no run (`PageAllocator.pairFreeThrough`):
    /// that must change no choice. The policy as it was before that memo (scanning the lowest
    /// `runSearchDepth` pages on every call) is the reference: on random free lists (mostly
    /// scattered pages, sometimes runs, sometimes more than `runSearchDepth` pages), with pages
    /// handed out and freed back at random, every page handed out is the reference's.
    @Test func remembersWhereNoRunIsAndChoosesAsAFullScanWould() {
        let seed = testSeed("pageAllocatorRunMemo")
        print("[remembersWhereNoRunIs] seed \(seed)")
        var generator = SeededGenerator(seed: seed)
        var memoUsed = 0
        for round in 0..<120 {
            var free = Set<UInt64>()
            var page: UInt64 = 2
            let scatteredOnly = round % 3 != 0
            for _ in 0..<Int(generator.next() % 1500) {
                page += 2 + generator.next() % 5
                free.insert(page)
                if !scatteredOnly && generator.next() % 40 == 0 {
                    for offset in 1...(1 + generator.next() % 6) { free.insert(page + offset) }
                    page += 8
                }
            }
            let fileEnd = page + 10
            var allocator = PageAllocator(nextPage: fileEnd, committedPageCount: fileEnd, freeTree: TreeRecord(), reuseLimit: 1)
            let loaded = allocator.addReusable(Array(free))
            #expect(loaded)
            var reference = ReferenceSinglePagePolicy(reusable: free.sorted(by: >), nextPage: fileEnd)
            var inUse: [UInt64] = []
            for step in 0..<Int(1 + generator.next() % 40) {
                if !inUse.isEmpty && generator.next() % 6 == 0 {
                    let back = inUse.remove(at: Int(generator.next() % UInt64(inUse.count)))
                    let added = allocator.addReusable([back])
                    #expect(added)
                    // A page given back could sit next to another free one: the memo must be
                    // forgotten (the `didSet` on `reusable`), or a later scan would skip a run.
                    #expect(allocator.pairFreeThrough == nil, "round \(round) step \(step): the memo outlived an addition")
                    reference.reusable = (reference.reusable + [back]).sorted(by: >)
                    continue
                }
                let budget = generator.next() % 2 == 0 ? 0 : Int(generator.next() % 4)
                if allocator.pairFreeThrough != nil { memoUsed += 1 }
                let (reused, usesBudget) = allocator.nextSinglePage(freshBudget: budget)
                let expected = reference.nextSinglePage(freshBudget: budget)
                #expect(reused == expected.page && usesBudget == expected.usesBudget,
                        "round \(round) step \(step): \(String(describing: reused)) \(usesBudget), a full scan gives \(String(describing: expected))")
                let handed: UInt64
                if let reused { handed = reused } else {
                    handed = allocator.nextPage
                    allocator.nextPage += 1
                    allocator.runEnd = allocator.nextPage
                    reference.nextPage += 1
                    reference.runEnd = reference.nextPage
                }
                inUse.append(handed)
                #expect(allocator.reusable == reference.reusable)
            }
        }
        #expect(memoUsed > 100, "the memo was in use on \(memoUsed) calls: the test reaches it")
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

    /// Random commits (one to three puts, hundreds of puts and deletes with overflow values,
    /// nested levels rolled back) while readers begin and end at random, so the carried free
    /// pages (`CarriedFreePages`) become reusable, wait, spill into the free tree and come back:
    /// after every few commits the store checks clean (each page below the high-water mark in
    /// exactly one tree, the free tree or the meta's carried list, so none was handed out twice
    /// nor lost), every meta's list stays within its capacity and never names a page freed after
    /// it, and readers still see their snapshots.
    @Test func carriedFreePagesUnderRandomCommitsAndReaders() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        var generator = SeededGenerator(seed: testSeed("carriedFreePagesModel"))
        var model: [String: [UInt8]] = [:]
        var readers: [(transaction: ReadTransaction, model: [String: [UInt8]])] = []
        try db.write { tx in _ = try tx.createTree("t") }
        func value() -> [UInt8] {
            let length = generator.next() % 20 == 0 ? 5_000 + Int(generator.next() % 4_000) : 10 + Int(generator.next() % 300)
            return [UInt8](repeating: UInt8(generator.next() % 256), count: length)
        }
        var spills = 0
        for step in 0..<400 {
            switch generator.next() % 10 {
            case 0 where readers.count < 3:
                readers.append((try db.beginRead(), model))
            case 1 where !readers.isEmpty:
                let (reader, expected) = readers.remove(at: Int(generator.next() % UInt64(readers.count)))
                // Every entry of the snapshot, against the model when it began: a page the
                // writer reused under it shows as a changed, lost or extra entry.
                var seen: [String: [UInt8]] = [:]
                try reader.scan(reader.tree("t")) { key, value in
                    seen[String(decoding: key.bytes, as: UTF8.self)] = value.bytes
                    return true
                }
                #expect(seen.count == expected.count, "step \(step): reader of generation \(reader.generation)")
                for (key, value) in expected where seen[key] != value {
                    Issue.record("step \(step): reader of generation \(reader.generation) reads \(key) wrong")
                    break
                }
                reader.end()
            default:
                let before = try db.read { $0.freeTree }
                let large = generator.next() % 8 == 0
                try db.write { tx in
                    let t = try tx.tree("t")
                    for _ in 0..<(large ? 100 + Int(generator.next() % 300) : 1 + Int(generator.next() % 3)) {
                        let key = String(format: "k%05d", generator.next() % 3_000)
                        if generator.next() % 3 == 0 {
                            _ = try tx.delete(key, in: t)
                            model[key] = nil
                        } else {
                            let bytes = value()
                            try tx.put(key, bytes, in: t)
                            model[key] = bytes
                        }
                    }
                    if generator.next() % 6 == 0 {
                        struct RolledBack: Error {}
                        _ = try? tx.nested { inner -> Void in
                            for _ in 0..<Int(1 + generator.next() % 40) { try inner.put(String(format: "k%05d", generator.next() % 3_000), value(), in: t) }
                            throw RolledBack()
                        }
                    }
                }
                if try db.read({ $0.freeTree }) != before { spills += 1 }
            }
            let meta = try db.read { ($0.generation, try $0.carriedFree()) }
            #expect(meta.1.wordCount <= CarriedFreePages.wordCapacity(pageSize: db.pageSize))
            #expect(meta.1.groups.allSatisfy { $0.freedBy <= meta.0 })
            if step % 8 == 0 {
                let report = try db.check()
                #expect(report.isClean, "step \(step): \(report.problems.prefix(3))")
                #expect(try db.read { try $0.count($0.tree("t")) } == model.count)
            }
        }
        for (reader, _) in readers { reader.end() }
        print("[carriedFreePagesModel] \(spills) commits of ~350 rewrote the free tree; file \(try db.read { $0.pageCount }) pages")
        #expect(try db.check().isClean)
    }
}

/// `PageAllocator.nextSinglePage` as it was before `longestRun` remembered where no run is: the
/// reference for `remembersWhereNoRunIsAndChoosesAsAFullScanWould`.
private struct ReferenceSinglePagePolicy {
    var reusable: [UInt64]
    var nextPage: UInt64
    var runEnd: UInt64?
    var pagesHandedOut = 0

    mutating func nextSinglePage(freshBudget: Int) -> (page: UInt64?, usesBudget: Bool) {
        pagesHandedOut += 1
        if let end = runEnd, let index = reusable.firstIndex(of: end) {
            reusable.remove(at: index)
            runEnd = end + 1
            return (end, false)
        }
        guard let lowest = reusable.last else { return (nil, false) }
        if pagesHandedOut <= PageAllocator.smallTransactionPages {
            if runEnd == nextPage && freshBudget > 0 { return (nil, true) }
            let run = longestRun()
            let isFirst = runEnd == nil
            if let run, !isFirst || run.length >= PageAllocator.firstRunPages {
                let page = reusable.remove(at: run.index)
                runEnd = page + 1
                return (page, false)
            }
            if isFirst && freshBudget > 0 { return (nil, true) }
        }
        reusable.removeLast()
        runEnd = lowest + 1
        return (lowest, false)
    }

    func longestRun() -> (index: Int, length: Int)? {
        let stop = max(0, reusable.count - PageAllocator.runSearchDepth)
        var best: (index: Int, length: Int)?
        var index = reusable.count - 1
        while index >= stop {
            var length = 1
            while index - length >= stop && reusable[index - length] == reusable[index] + UInt64(length) { length += 1 }
            if length >= 2 && length > (best?.length ?? 0) { best = (index, length) }
            index -= length
        }
        return best
    }
}
