/// The one scan of a page list kept in order: where it stops being strictly ordered. Free lists
/// are kept sorted (`CarriedFreePages` groups, the allocator's `reusable` pages, a commit's
/// `freed` pages before they are recorded), so a page named twice sits next to its copy, and a
/// repeat is found by comparing neighbours — the check that a damaged or forged file never hands
/// a page out twice.
enum SortedPages {
    /// The first position of `pages` whose page is not above (`ascending`) or not below the page
    /// before it; nil if the list is strictly ordered. In a list sorted that way: the second copy
    /// of the first page named twice.
    @inline(__always)
    static func firstOutOfOrder(_ pages: ArraySlice<UInt64>, ascending: Bool) -> Int? {
        var index = pages.startIndex + 1
        while index < pages.endIndex {
            if ascending ? pages[index - 1] >= pages[index] : pages[index - 1] <= pages[index] { return index }
            index += 1
        }
        return nil
    }

    /// The first page that ascending `pages` names twice, nil if none does.
    @inline(__always)
    static func firstRepeat(inAscending pages: ArraySlice<UInt64>) -> UInt64? {
        firstOutOfOrder(pages, ascending: true).map { pages[$0] }
    }

    /// Whether every page of `pages` is below the one before it (descending, none twice).
    @inline(__always)
    static func isStrictlyDescending(_ pages: [UInt64]) -> Bool {
        firstOutOfOrder(pages[...], ascending: false) == nil
    }
}
