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

    /// Whether every page of `pages` is at or above the one before it.
    @inline(__always)
    static func isAscending(_ pages: [UInt64]) -> Bool {
        var index = 1
        while index < pages.count {
            if pages[index - 1] > pages[index] { return false }
            index += 1
        }
        return true
    }

    /// `pages` in ascending order: as given when already so, reversed when strictly descending
    /// (the allocator's `reusable`), sorted otherwise. Sorting a commit's few dozen free pages
    /// that were already in order was a third of carrying them in its meta.
    static func ascending(_ pages: [UInt64]) -> [UInt64] {
        if isAscending(pages) { return pages }
        if isStrictlyDescending(pages) { return reversed(pages) }
        return pages.sorted()
    }

    /// `pages` in reverse order, copied in one pass.
    static func reversed(_ pages: [UInt64]) -> [UInt64] {
        let count = pages.count
        return pages.withUnsafeBufferPointer { source in
            [UInt64](unsafeUninitializedCapacity: count) { target, initialized in
                for index in 0..<count { target[index] = source[count - 1 - index] }
                initialized = count
            }
        }
    }

    /// The ascending lists `first` and `second` merged into one ascending list (a page in both
    /// appears twice, next to its copy), in time linear in both counts.
    static func merged(_ first: [UInt64], _ second: [UInt64]) -> [UInt64] {
        guard let firstLast = first.last, let secondFirst = second.first else { return first + second }
        if firstLast <= secondFirst { return first + second }
        if let secondLast = second.last, let firstFirst = first.first, secondLast <= firstFirst { return second + first }
        var result: [UInt64] = []
        result.reserveCapacity(first.count + second.count)
        var (i, j) = (0, 0)
        while i < first.count && j < second.count {
            if first[i] <= second[j] { result.append(first[i]); i += 1 } else { result.append(second[j]); j += 1 }
        }
        result.append(contentsOf: first[i...])
        result.append(contentsOf: second[j...])
        return result
    }

    /// A page both ascending lists name, nil if they share none (linear in both counts).
    static func firstCommon(_ first: [UInt64], _ second: [UInt64]) -> UInt64? {
        guard let firstFirst = first.first, let secondFirst = second.first,
              firstFirst <= second[second.count - 1], secondFirst <= first[first.count - 1] else { return nil }
        var (i, j) = (0, 0)
        while i < first.count && j < second.count {
            let (a, b) = (first[i], second[j])
            if a == b { return a }
            if a < b { i += 1 } else { j += 1 }
        }
        return nil
    }
}
