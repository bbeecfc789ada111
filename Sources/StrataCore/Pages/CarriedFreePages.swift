/// The recently freed pages a format-4 meta carries instead of the free tree (see `PageAllocator`
/// for the reuse rule, `MetaPage` for where it sits).
///
/// A small commit frees the few pages it copied and reuses about as many freed two commits
/// earlier. Recording both in the free tree rewrote two of its pages in every such commit (a
/// third of a one-put commit's pages); the meta is written by every commit anyway, so these
/// groups ride in it, and the free tree is touched only when they outgrow `wordCapacity`.
///
/// Encoded as u64 words: a group is a header word `1 << 63 | freedBy` followed by its pages
/// (page numbers are below 2^40, so the top bit tells the two apart), groups in ascending
/// `freedBy`, pages ascending within a group. On disk the words follow a u64 checksum of them
/// (seeded by the meta's transaction id). A list decodes only if it is well formed: at most
/// `wordCapacity` words, every group non-empty, `freedBy` strictly ascending and never past the
/// meta's transaction (a commit carries the pages it freed itself under its own id), every page
/// past the meta pages and below the meta's page count, no page twice. That a carried page is in
/// no tree and not also in the free tree is what `StoreChecker` verifies. Writes catch a forged
/// duplicate only within one transaction: a page the free tree names again while the carried
/// copy is still reusable (`addReusable`), or one handed out already (`loadFreeRecord`,
/// `checkPendingUnused`, `carryFreeList`). Across transactions (the carried copy handed out and
/// committed, the free tree's copy loaded later) nothing but `check()` sees it, and writes to a
/// forged store can hand the page out twice and corrupt it first: the same limit as a page the
/// free tree names twice in records loaded by different transactions.
struct CarriedFreePages: Equatable, Sendable {
    struct Group: Equatable, Sendable {
        /// The transaction that freed the pages (for pages that were reusable when they were
        /// carried: just below that commit's reuse limit, as leftover free-tree records).
        var freedBy: UInt64
        /// Ascending, not empty.
        var pages: [UInt64]
    }

    /// Ascending `freedBy`, each at most once.
    var groups: [Group] = []

    /// Words the encoded list takes (a header per group plus its pages; the checksum aside).
    var wordCount: Int {
        var words = 0
        for group in groups { words += 1 + group.pages.count }
        return words
    }

    /// A page the list names twice (in one group or in two), nil if none. (A page named twice
    /// would be handed out twice once its groups are reusable.) Few groups, the common case, are
    /// checked each on its own (a repeat sits next to its copy) and then pairwise by a walk of
    /// both for a common page, without sorting or copying any page (gathering and sorting the
    /// pages of a small commit's list was a third of carrying it); more than 8 are gathered and
    /// sorted. With 8 groups or fewer every group must be ascending (`insert` keeps them so):
    /// a group out of order is reported as a repeat, never passed. Which page is reported when
    /// several repeat is not specified.
    var repeatedPage: UInt64? {
        if groups.count <= 8 {
            for group in groups {
                if let page = SortedPages.firstRepeat(inAscending: group.pages[...]) { return page }
            }
            for first in groups.indices {
                for second in groups.indices where second > first {
                    if let page = SortedPages.firstCommon(groups[first].pages, groups[second].pages) { return page }
                }
            }
            return nil
        }
        var pages: [UInt64] = []
        pages.reserveCapacity(pageCount)
        for group in groups { pages.append(contentsOf: group.pages) }
        pages.sort()
        return SortedPages.firstRepeat(inAscending: pages[...])
    }

    var pageCount: Int { groups.reduce(0) { $0 + $1.pages.count } }

    var isEmpty: Bool { groups.isEmpty }

    /// The most words a meta carries: an eighth of the page (128 words, about twenty small
    /// commits' worth, at 4 KiB). What is left of the meta page still holds `MetaPage.runCapacity`
    /// runs (353 at 4 KiB), more than any commit small enough to be verified at open needs
    /// scattered in few runs.
    static func wordCapacity(pageSize: Int) -> Int { pageSize / 32 }

    /// Bytes on disk: the checksum and the words, or nothing for an empty list.
    static func blockByteCount(words: Int) -> Int { words == 0 ? 0 : 8 + 8 * words }

    /// Why a carried list does not decode.
    struct Malformed: Error, Equatable {
        let reason: String
    }

    private static let headerFlag: UInt64 = 1 << 63

    static func checksumSeed(_ transactionID: UInt64) -> UInt64 { Checksum.seed ^ transactionID ^ 0xCA22_1ED0_F8EE_0000 }

    /// Adds a group, keeping `groups` ascending; a group of a `freedBy` already present merges
    /// into it (pages stay ascending). Pages must not be in the list already; if one is, both
    /// copies are kept (`SortedPages.merged` never drops one), which is what lets
    /// `repeatedPage` find it: a merge that dropped duplicates would hide a page named twice.
    mutating func insert(freedBy: UInt64, pages: [UInt64]) {
        guard !pages.isEmpty else { return }
        let sorted = SortedPages.ascending(pages)
        if groups.last.map({ $0.freedBy < freedBy }) ?? true {
            groups.append(Group(freedBy: freedBy, pages: sorted))
        } else if let index = groups.firstIndex(where: { $0.freedBy >= freedBy }) {
            if groups[index].freedBy == freedBy {
                groups[index].pages = SortedPages.merged(groups[index].pages, sorted)
            } else {
                groups.insert(Group(freedBy: freedBy, pages: sorted), at: index)
            }
        } else {
            groups.append(Group(freedBy: freedBy, pages: sorted))
        }
    }

    /// Writes the block (`blockByteCount(words: wordCount)` bytes) at `base`.
    func encode(into base: UnsafeMutableRawPointer, transactionID: UInt64) {
        guard !groups.isEmpty else { return }
        var offset = 8
        for group in groups {
            base.storeBytes(of: CarriedFreePages.headerFlag | group.freedBy, toByteOffset: offset, as: UInt64.self)
            offset += 8
            for page in group.pages {
                base.storeBytes(of: page, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
        }
        base.storeBytes(of: Checksum.hash(base + 8, count: offset - 8, seed: CarriedFreePages.checksumSeed(transactionID)),
                        toByteOffset: 0, as: UInt64.self)
    }

    /// Decodes a block of `words` words at `block` written by the meta of `transactionID`
    /// whose high-water mark is `pageCount`; nil and the reason if it is not a well-formed list
    /// (see the type's comment).
    static func decode(_ block: UnsafeRawBufferPointer, words: Int, transactionID: UInt64, pageCount: UInt64,
                       pageSize: Int) -> Result<CarriedFreePages, Malformed> {
        guard words > 0 else { return .success(CarriedFreePages()) }
        guard words <= wordCapacity(pageSize: pageSize), block.count >= blockByteCount(words: words), let base = block.baseAddress else {
            return .failure(Malformed(reason: "it carries \(words) free-page words (at most \(wordCapacity(pageSize: pageSize)))"))
        }
        guard base.loadUnaligned(as: UInt64.self) == Checksum.hash(base + 8, count: 8 * words, seed: checksumSeed(transactionID)) else {
            return .failure(Malformed(reason: "its carried free pages fail their checksum"))
        }
        var list = CarriedFreePages()
        var all: [UInt64] = []
        all.reserveCapacity(words)
        for index in 0..<words {
            let word = base.loadUnaligned(fromByteOffset: 8 + 8 * index, as: UInt64.self)
            if word & headerFlag != 0 {
                let freedBy = word & ~headerFlag
                if let last = list.groups.last, last.pages.isEmpty || last.freedBy >= freedBy {
                    return .failure(Malformed(reason: "its carried free pages are out of order at word \(index)"))
                }
                guard freedBy <= transactionID else {
                    return .failure(Malformed(reason: "it carries pages freed by transaction \(freedBy), after its own \(transactionID)"))
                }
                list.groups.append(Group(freedBy: freedBy, pages: []))
            } else {
                guard !list.groups.isEmpty else { return .failure(Malformed(reason: "its carried free pages start without a group")) }
                guard word >= PageLayout.metaPageCount, word < pageCount else {
                    return .failure(Malformed(reason: "it carries free page \(word), outside the file (2..<\(pageCount))"))
                }
                if let previous = list.groups[list.groups.count - 1].pages.last, previous >= word {
                    return .failure(Malformed(reason: "its carried free pages are out of order at word \(index)"))
                }
                list.groups[list.groups.count - 1].pages.append(word)
                all.append(word)
            }
        }
        guard let last = list.groups.last, !last.pages.isEmpty else { return .failure(Malformed(reason: "it carries an empty group of free pages")) }
        all.sort()
        if let repeated = SortedPages.firstRepeat(inAscending: all[...]) {
            return .failure(Malformed(reason: "it carries free page \(repeated) twice"))
        }
        return .success(list)
    }

    /// Decodes a reader's copy of a meta's carried block (`MetaPage.carriedCopy`: the checksum
    /// word, then the words; empty for none) with the checks of `decode(_:words:...)`. The
    /// copy's checksum held when it was taken, so a failure here means a forged meta.
    static func decode(copy: [UInt64], transactionID: UInt64, pageCount: UInt64, pageSize: Int) -> Result<CarriedFreePages, Malformed> {
        guard !copy.isEmpty else { return .success(CarriedFreePages()) }
        return copy.withUnsafeBytes { block in
            decode(block, words: copy.count - 1, transactionID: transactionID, pageCount: pageCount, pageSize: pageSize)
        }
    }
}
