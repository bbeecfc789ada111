import Testing
@testable import StrataCore

/// How a commit assembles its carried free list without sorting what is already in order
/// (`SortedPages.ascending`, `SortedPages.merged`, `CarriedFreePages.insert`) and finds a page
/// the list names twice without gathering and sorting it (`CarriedFreePages.repeatedPage`):
/// randomized against the gather-and-sort it replaced.
@Suite struct CarriedListAssemblyTests {
    /// The check the commit used before: every page of every group, sorted, neighbours compared.
    static func repeatBySorting(_ list: CarriedFreePages) -> UInt64? {
        let pages = list.groups.flatMap(\.pages).sorted()
        return SortedPages.firstRepeat(inAscending: pages[...])
    }

    @Test func assemblyMatchesSorting() {
        let seed = testSeed("CarriedListAssemblyTests.assemblyMatchesSorting")
        var generator = SeededGenerator(seed: seed)
        for round in 0..<2_000 {
            var list = CarriedFreePages()
            var reference: [UInt64: [UInt64]] = [:]
            // Up to 12 groups (past 8, `repeatedPage` gathers and sorts), a few freedBy values
            // so that some inserts merge, pages from a small range so that some repeat.
            for _ in 0..<Int.random(in: 1...12, using: &generator) {
                let freedBy = UInt64.random(in: 0...15, using: &generator)
                var pages = Set<UInt64>()
                for _ in 0..<Int.random(in: 1...20, using: &generator) { pages.insert(UInt64.random(in: 2..<400, using: &generator)) }
                var given = Array(pages)
                // Sometimes a page named twice within the group given (a list built wrongly in
                // memory): both copies must be kept and the repeat found.
                if Int.random(in: 0..<5, using: &generator) == 0, let page = given.randomElement(using: &generator) { given.append(page) }
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: given.sort()
                case 1: given.sort(by: >)
                default: given.shuffle(using: &generator)
                }
                list.insert(freedBy: freedBy, pages: given)
                reference[freedBy, default: []] += given
            }
            #expect(list.groups.map(\.freedBy) == reference.keys.sorted(), "round \(round)")
            for group in list.groups {
                #expect(group.pages == reference[group.freedBy]!.sorted(), "round \(round), freedBy \(group.freedBy)")
            }
            let expected = CarriedListAssemblyTests.repeatBySorting(list)
            let found = list.repeatedPage
            #expect((found == nil) == (expected == nil), "round \(round)")
            if let found {
                #expect(list.groups.flatMap(\.pages).filter { $0 == found }.count >= 2, "round \(round): \(found) is not named twice")
            }
        }
    }

    @Test func helpersOnEdgeCases() {
        #expect(SortedPages.ascending([]) == [])
        #expect(SortedPages.ascending([5, 3, 2]) == [2, 3, 5])
        #expect(SortedPages.ascending([3, 3, 2]) == [2, 3, 3])
        #expect(SortedPages.ascending([2, 7, 4]) == [2, 4, 7])
        #expect(SortedPages.reversed([1, 2, 3]) == [3, 2, 1])
        #expect(SortedPages.merged([1, 4, 9], [2, 4, 10]) == [1, 2, 4, 4, 9, 10])
        #expect(SortedPages.merged([], [2]) == [2])
        #expect(SortedPages.merged([5, 6], [1, 2]) == [1, 2, 5, 6])
        #expect(SortedPages.firstCommon([1, 4, 9], [2, 9]) == 9)
        #expect(SortedPages.firstCommon([1, 4], [5, 9]) == nil)
        #expect(SortedPages.firstCommon([], [5]) == nil)
        // A repeat inside one group (a merge of two groups of the same freedBy at reuse limit 0).
        var list = CarriedFreePages()
        list.insert(freedBy: 0, pages: [3, 4])
        list.insert(freedBy: 0, pages: [4, 8])
        #expect(list.repeatedPage == 4)
    }
}
