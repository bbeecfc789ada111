import Foundation
@testable import StrataCore

/// One fuzz input: a base store and the seed of the mutations applied to it. The recipe is the whole
/// input: replaying it rebuilds the same bytes (the base stores are built deterministically).
struct FuzzRecipe: Sendable, CustomStringConvertible {
    let base: FuzzBase
    let seed: UInt64
    var description: String { "FuzzRecipe(base: .\(base), seed: \(seed))" }
}

enum FuzzBase: String, Sendable, CaseIterable {
    /// One tree of ten entries: the root is a leaf.
    case small
    /// Trees of depth 2 and 3, overflow values, a dropped tree (so the free list has entries),
    /// then small commits (so the newest metas carry free pages).
    case multi
}

/// A valid store's bytes plus what the mutator needs to aim: every reachable page with its kind,
/// tree and ancestors.
struct FuzzTemplate: Sendable {
    struct PageInfo: Sendable {
        let number: Int
        let isLeaf: Bool
        let tree: String
        let ancestors: [Int]
    }

    let bytes: [UInt8]
    let pageSize: Int
    /// The hash of the template's page checksums (its format's, see `PageLayout`).
    let pageChecksum: PageChecksum
    let pageCount: Int
    let newestMetaSlot: Int
    let pages: [PageInfo]
    let catalogPages: [Int]
    let freeTreePages: [Int]
    let overflowRuns: [Int]

    static func build(_ base: FuzzBase) throws -> FuzzTemplate {
        let dir = TemporaryDirectory("fuzz-base")
        var options = DatabaseOptions()
        options.pageSize = 4096
        options.durability = .none
        do {
            let db = try Database(path: dir.path, options: options)
            switch base {
            case .small:
                try db.write { tx in
                    let t = try tx.createTree("t")
                    for i in 0..<10 { try tx.put(String(format: "key %05d", i * 37), "small \(i)", in: t) }
                }
            case .multi:
                try db.write { tx in
                    let t = try tx.createTree("t")
                    for i in 0..<1200 {
                        let length = i % 50 == 0 ? 6000 + i : 20 + i % 60
                        try tx.put(String(format: "key %05d", i), [UInt8](repeating: UInt8(i % 251), count: length), in: t)
                    }
                    let deep = try tx.createTree("deep")
                    for i in 0..<2000 {
                        try tx.put(String(format: "deep %05d ", i) + String(repeating: "d", count: 110), "v\(i)", in: deep)
                    }
                    let gone = try tx.createTree("gone")
                    for i in 0..<300 { try tx.put("gone \(i)", [UInt8](repeating: 1, count: 50), in: gone) }
                }
                try db.write { tx in
                    let t = try tx.tree("t")
                    for i in stride(from: 0, to: 1200, by: 3) { try tx.put(String(format: "key %05d", i), "rewritten \(i)", in: t) }
                    for i in stride(from: 0, to: 1200, by: 7) { try tx.delete(String(format: "key %05d", i), in: t) }
                }
                try db.write { tx in
                    try tx.dropTree(try tx.tree("gone"))
                    let u = try tx.createTree("u")
                    for i in 0..<300 { try tx.put("u \(i)", [UInt8](repeating: 2, count: 30), in: u) }
                }
                for i in 0..<3 { try db.write { tx in try tx.put(String(format: "key %05d", i * 401 + 1), "small commit \(i)", in: try tx.tree("t")) } }
            }
        }
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/data")))
        return try bytes.withUnsafeBytes { raw in
            let metas = try (0..<2).map { slot -> MetaPage? in
                let copy = Array(raw[(slot * 4096)..<(slot * 4096 + MetaPage.encodedSize)])
                return try copy.withUnsafeBytes { try MetaPage.decode($0, slot: UInt64(slot)).get() }
            }
            let newest = metas.enumerated().max { ($0.element?.transactionID ?? 0) < ($1.element?.transactionID ?? 0) }!
            let meta = newest.element!
            var walker = Walker(raw: raw, pageSize: meta.pageSize, pageCount: Int(meta.pageCount))
            try walker.walk(Int(meta.catalog.root), depth: meta.catalog.depth, tree: "(catalog)")
            try walker.walk(Int(meta.freeTree.root), depth: meta.freeTree.depth, tree: "(free)")
            for (name, record) in walker.catalogEntries { try walker.walk(Int(record.root), depth: record.depth, tree: name) }
            return FuzzTemplate(bytes: bytes, pageSize: meta.pageSize, pageChecksum: meta.pageChecksum, pageCount: Int(meta.pageCount),
                                newestMetaSlot: newest.offset,
                                pages: walker.pages, catalogPages: walker.pages.filter { $0.tree == "(catalog)" }.map(\.number),
                                freeTreePages: walker.pages.filter { $0.tree == "(free)" }.map(\.number), overflowRuns: walker.overflowRuns)
        }
    }

    /// Collects the pages of the template's trees (which are valid: no cycle checks needed).
    struct Walker {
        let raw: UnsafeRawBufferPointer
        let pageSize: Int
        let pageCount: Int
        var pages: [PageInfo] = []
        var catalogEntries: [(String, TreeRecord)] = []
        var overflowRuns: [Int] = []

        init(raw: UnsafeRawBufferPointer, pageSize: Int, pageCount: Int) {
            self.raw = raw
            self.pageSize = pageSize
            self.pageCount = pageCount
        }

        mutating func walk(_ number: Int, depth: Int, tree: String, ancestors: [Int] = []) throws {
            guard number != 0 else { return }
            let page = try Page(validating: raw.baseAddress! + number * pageSize, size: pageSize, number: UInt64(number))
            pages.append(PageInfo(number: number, isLeaf: page.isLeaf, tree: tree, ancestors: ancestors))
            if page.isLeaf {
                for index in 0..<page.count {
                    let node = try page.leaf(index)
                    if node.isOverflow { overflowRuns.append(Int(node.overflowPage)) }
                    if tree == "(catalog)" {
                        let name = String(decoding: node.key, as: UTF8.self)
                        catalogEntries.append((name, TreeRecord(decoding: node.payload)))
                    }
                }
            } else {
                for index in 0..<page.count {
                    try walk(Int(try page.child(index)), depth: depth, tree: tree, ancestors: ancestors + [number])
                }
            }
        }
    }
}

/// Applies the mutations of a recipe to a template's bytes.
struct FuzzMutator {
    enum Mutation: String, CaseIterable {
        case bitFlips, byteSmash, truncate, swapPages, copyPage, zeroPage, forgeHeader, forgeNode, duplicateSlot,
             cycle, forgeMeta, forgeCatalogRecord, forgeFreeList, forgeOverflow, forgePageList, forgeCarriedFreePages
    }

    let template: FuzzTemplate
    var bytes: [UInt8]
    var random: SeededGenerator
    var applied: [String] = []

    init(template: FuzzTemplate, seed: UInt64) {
        self.template = template
        bytes = template.bytes
        random = SeededGenerator(seed: seed)
    }

    var pageSize: Int { template.pageSize }

    static func mutate(_ template: FuzzTemplate, seed: UInt64) -> (bytes: [UInt8], applied: [String]) {
        var mutator = FuzzMutator(template: template, seed: seed)
        let count = [1, 1, 1, 2, 2, 3][Int.random(in: 0..<6, using: &mutator.random)]
        var mutations = (0..<count).map { _ in Mutation.allCases[Int.random(in: 0..<Mutation.allCases.count, using: &mutator.random)] }
        // Truncation last: the others aim at pages by number.
        mutations.sort { $1 == .truncate && $0 != .truncate }
        for mutation in mutations { mutator.apply(mutation) }
        return (mutator.bytes, mutator.applied)
    }

    /// A random number in `range` (its lower bound if the range is empty: forged counts can be 0).
    private mutating func int(_ range: Range<Int>) -> Int { range.isEmpty ? range.lowerBound : Int.random(in: range, using: &random) }
    private mutating func chance(_ percent: Int) -> Bool { int(0..<100) < percent }

    private mutating func anyPage(leaf: Bool? = nil, tree: String? = nil) -> FuzzTemplate.PageInfo? {
        let candidates = template.pages.filter { (leaf == nil || $0.isLeaf == leaf) && (tree == nil || $0.tree == tree) }
        return candidates.isEmpty ? nil : candidates[int(0..<candidates.count)]
    }

    // Earlier mutations may have forged the fields later ones aim by: every access is bounds-checked
    // (reads past the end give 0, writes past it are dropped).
    private func load(_ offset: Int, width: Int) -> UInt64 {
        guard offset >= 0, offset + width <= bytes.count else { return 0 }
        return (0..<width).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * UInt64($1)) }
    }
    private mutating func store(_ value: UInt64, _ offset: Int, width: Int) {
        guard offset >= 0, offset + width <= bytes.count else { return }
        for index in 0..<width { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))) }
    }
    private func load16(_ offset: Int) -> Int { Int(load(offset, width: 2)) }
    private mutating func store16(_ value: Int, _ offset: Int) { store(UInt64(UInt16(truncatingIfNeeded: value)), offset, width: 2) }
    private mutating func store32(_ value: UInt32, _ offset: Int) { store(UInt64(value), offset, width: 4) }
    private mutating func store64(_ value: UInt64, _ offset: Int) { store(value, offset, width: 8) }
    private func load64(_ offset: Int) -> UInt64 { load(offset, width: 8) }
    private mutating func set(_ offset: Int, _ value: UInt8) { store(UInt64(value), offset, width: 1) }

    /// A forged 16-bit field: edge values more often than random ones.
    private mutating func forged16(near value: Int) -> Int {
        [0, 1, value - 1, value + 1, value + 2, pageSize - 1, pageSize, pageSize + 1, 0xFFFF, int(0..<0x10000), int(0..<(pageSize + 64))][int(0..<11)]
    }

    /// A forged page number: in range, at the edges, a meta, far outside.
    private mutating func forgedPage(near value: UInt64) -> UInt64 {
        let count = UInt64(template.pageCount)
        return [0, 1, 2, value, value &+ 1, count - 1, count, count + 1, UInt64(int(2..<template.pageCount)), UInt64.max, 1 << 40,
                UInt64(template.pages[int(0..<template.pages.count)].number)][int(0..<12)]
    }

    /// Recomputes a tree page's checksum so that structure checks, not the checksum, meet the damage.
    private mutating func reseal(_ page: Int, pages: Int = 1) {
        let start = page * pageSize
        guard start + pages * pageSize <= bytes.count else { return }
        let sum = bytes.withUnsafeBytes { template.pageChecksum.of($0.baseAddress! + start, byteCount: pages * pageSize) }
        store64(sum, start + PageLayout.checksumOffset)
    }

    private mutating func resealMeta(_ slot: Int) {
        let start = slot * pageSize
        let sum = bytes.withUnsafeBytes { Checksum.hash($0.baseAddress! + start, count: MetaPage.checksumOffset) }
        store64(sum, start + MetaPage.checksumOffset)
    }

    /// Recomputes the checksum of a meta's page list (over as many runs as its count announces,
    /// capped at what fits in the page) so that the run checks, not the checksum, meet the forgery.
    private mutating func resealPageList(_ slot: Int) {
        let start = slot * pageSize
        let count = min(Int(load(start + MetaPage.Offset.runCount, width: 4)), MetaPage.runCapacity(pageSize: pageSize))
        guard start + MetaPage.encodedSize + 8 * count <= bytes.count else { return }
        let transaction = load64(start + 48)
        let sum = bytes.withUnsafeBytes {
            Checksum.hash($0.baseAddress! + start + MetaPage.Offset.pageDigest, count: 8 + 8 * count, seed: Checksum.seed ^ transaction)
        }
        store64(sum, start + MetaPage.Offset.runChecksum)
    }

    /// Where a meta's carried free pages start (their checksum word) and how many words it
    /// announces, capped at what fits.
    private func carriedBlock(_ slot: Int) -> (start: Int, words: Int) {
        let start = slot * pageSize
        let runs = min(Int(load(start + MetaPage.Offset.runCount, width: 4)), MetaPage.runCapacity(pageSize: pageSize))
        let block = start + MetaPage.encodedSize + 8 * runs
        let words = min(Int(load(start + MetaPage.Offset.carriedWordCount, width: 4)), (start + pageSize - block) / 8 - 1)
        return (block, max(0, words))
    }

    /// Recomputes the checksum of a meta's carried free pages over the words it announces.
    private mutating func resealCarried(_ slot: Int) {
        let (block, words) = carriedBlock(slot)
        guard block + 8 + 8 * words <= bytes.count else { return }
        let transaction = load64(slot * pageSize + MetaPage.Offset.transactionID)
        let sum = bytes.withUnsafeBytes {
            Checksum.hash($0.baseAddress! + block + 8, count: 8 * words, seed: CarriedFreePages.checksumSeed(transaction))
        }
        store64(sum, block)
    }

    private mutating func maybeReseal(_ page: Int) {
        if chance(75) { reseal(page) } else { applied.append("(checksum left stale)") }
    }

    mutating func apply(_ mutation: Mutation) {
        switch mutation {
        case .bitFlips:
            let flips = int(1..<17)
            for _ in 0..<flips {
                let offset = int(0..<bytes.count)
                set(offset, bytes[offset] ^ 1 << UInt8(int(0..<8)))
            }
            applied.append("bitFlips \(flips)")
        case .byteSmash:
            guard let page = anyPage() else { return }
            let start = page.number * pageSize + int(0..<pageSize)
            let length = min(int(1..<65), bytes.count - start)
            for offset in start..<start + length { set(offset, UInt8.random(in: 0...255, using: &random)) }
            applied.append("byteSmash page \(page.number) +\(start % pageSize) \(length)")
            maybeReseal(page.number)
        case .truncate:
            let needed = template.pageCount * pageSize
            let length = [int(0..<bytes.count), needed - 1, needed - pageSize, int(0..<(2 * pageSize)), pageSize + 100, 0,
                          int(2..<template.pageCount) * pageSize][int(0..<7)]
            bytes.removeSubrange(min(bytes.count, max(0, length))...)
            applied.append("truncate to \(length)")
        case .swapPages:
            guard let a = anyPage(), let b = anyPage(), a.number != b.number else { return }
            for offset in 0..<pageSize { bytes.swapAt(a.number * pageSize + offset, b.number * pageSize + offset) }
            let renumber = chance(60)
            if renumber {
                store64(UInt64(a.number), a.number * pageSize)
                store64(UInt64(b.number), b.number * pageSize)
                reseal(a.number)
                reseal(b.number)
            }
            applied.append("swapPages \(a.number) \(b.number)\(renumber ? " renumbered" : "")")
        case .copyPage:
            guard let a = anyPage(), let b = anyPage(), a.number != b.number else { return }
            bytes.replaceSubrange(b.number * pageSize..<(b.number + 1) * pageSize, with: bytes[a.number * pageSize..<(a.number + 1) * pageSize])
            store64(UInt64(b.number), b.number * pageSize)
            reseal(b.number)
            applied.append("copyPage \(a.number) over \(b.number)")
        case .zeroPage:
            guard let page = anyPage() else { return }
            bytes.replaceSubrange(page.number * pageSize..<(page.number + 1) * pageSize, with: [UInt8](repeating: 0, count: pageSize))
            applied.append("zeroPage \(page.number)")
        case .forgeHeader:
            guard let page = anyPage() else { return }
            let base = page.number * pageSize
            switch int(0..<5) {
            case 0:
                let value = forged16(near: load16(base + PageLayout.countOffset))
                store16(value, base + PageLayout.countOffset)
                if chance(50) { store16(PageLayout.headerSize + 2 * value, base + PageLayout.lowerOffset) }
                applied.append("forgeHeader page \(page.number) count \(value)")
            case 1:
                let value = forged16(near: load16(base + PageLayout.lowerOffset))
                store16(value, base + PageLayout.lowerOffset)
                applied.append("forgeHeader page \(page.number) lower \(value)")
            case 2:
                let value = forged16(near: load16(base + PageLayout.upperOffset))
                store16(value, base + PageLayout.upperOffset)
                applied.append("forgeHeader page \(page.number) upper \(value)")
            case 3:
                let kind = UInt8(int(0..<6))
                set(base + PageLayout.kindOffset, kind)
                applied.append("forgeHeader page \(page.number) kind \(kind)")
            default:
                let number = forgedPage(near: UInt64(page.number))
                store64(number, base)
                applied.append("forgeHeader page \(page.number) number \(number)")
            }
            maybeReseal(page.number)
        case .forgeNode:
            guard let page = anyPage() else { return }
            let base = page.number * pageSize
            let count = load16(base + PageLayout.countOffset)
            guard count > 0 else { return }
            let index = int(0..<count)
            let slot = base + PageLayout.headerSize + 2 * index
            let node = base + load16(slot)
            switch (page.isLeaf, int(0..<4)) {
            case (_, 0):
                let value = forged16(near: load16(slot))
                store16(value, slot)
                applied.append("forgeNode page \(page.number) slot \(index) offset \(value)")
            case (true, 1):
                let value = forged16(near: load16(node + 2))
                store16(value, node + 2)
                applied.append("forgeNode page \(page.number) leaf \(index) key length \(value)")
            case (true, 2):
                let choices: [UInt32] = [0, 1, UInt32(pageSize), 0x7FFF_FFFF, 0xFFFF_FFFF, UInt32.random(in: 0...100_000, using: &random)]
                let value = choices[int(0..<choices.count)]
                store32(value, node + 4)
                applied.append("forgeNode page \(page.number) leaf \(index) value length \(value)")
            case (true, _):
                set(node, UInt8(truncatingIfNeeded: load(node, width: 1)) ^ LeafFlags.overflow)
                applied.append("forgeNode page \(page.number) leaf \(index) overflow flag toggled")
            case (false, 1):
                let value = forged16(near: load16(node + 8))
                store16(value, node + 8)
                applied.append("forgeNode page \(page.number) branch \(index) key length \(value)")
            case (false, _):
                let child = forgedPage(near: load64(node))
                store64(child, node)
                applied.append("forgeNode page \(page.number) branch \(index) child \(child)")
            }
            maybeReseal(page.number)
        case .duplicateSlot:
            guard let page = anyPage() else { return }
            let base = page.number * pageSize
            let count = load16(base + PageLayout.countOffset)
            guard count > 1 else { return }
            let (from, to) = (int(0..<count), int(0..<count))
            store16(load16(base + PageLayout.headerSize + 2 * from), base + PageLayout.headerSize + 2 * to)
            applied.append("duplicateSlot page \(page.number) \(from) -> \(to)")
            maybeReseal(page.number)
        case .cycle:
            guard let branch = anyPage(leaf: false) else { return }
            let base = branch.number * pageSize
            let count = load16(base + PageLayout.countOffset)
            guard count > 0 else { return }
            let index = int(0..<count)
            let target = chance(30) || branch.ancestors.isEmpty ? branch.number : branch.ancestors[int(0..<branch.ancestors.count)]
            store64(UInt64(target), base + load16(base + PageLayout.headerSize + 2 * index))
            reseal(branch.number)
            applied.append("cycle branch \(branch.number) child \(index) -> \(target)")
        case .forgeMeta:
            let slot = chance(80) ? template.newestMetaSlot : 1 - template.newestMetaSlot
            let base = slot * pageSize
            // Catalog record at 56, free tree record at 120, page count at 184.
            let record = chance(50) ? 56 : 120
            switch int(0..<4) {
            case 0:
                let root = forgedPage(near: load64(base + record))
                store64(root, base + record)
                applied.append("forgeMeta \(slot) record \(record) root \(root)")
            case 1:
                let depth = [0, 1, 2, 3, 4, 31, 32, 33, 0xFFFF][int(0..<9)]
                store16(depth, base + record + 40)
                applied.append("forgeMeta \(slot) record \(record) depth \(depth)")
            case 2:
                let entries = [0, 1, UInt64.max, load64(base + record + 8) &+ 1][int(0..<4)]
                store64(entries, base + record + 8)
                applied.append("forgeMeta \(slot) record \(record) entries \(entries)")
            default:
                let pages = [2, 3, UInt64(template.pageCount - 1), UInt64(template.pageCount + 1), UInt64(template.pageCount) * 4, 1 << 47][int(0..<6)]
                store64(pages, base + 184)
                applied.append("forgeMeta \(slot) page count \(pages)")
            }
            if chance(90) { resealMeta(slot) } else { applied.append("(meta checksum left stale)") }
        case .forgeCarriedFreePages:
            // The free pages a meta carries: counts, pages that are live, metas, past the end or
            // listed twice, groups freed in the future or out of order, pages without a group.
            let slot = chance(80) ? template.newestMetaSlot : 1 - template.newestMetaSlot
            let (block, words) = carriedBlock(slot)
            let capacity = CarriedFreePages.wordCapacity(pageSize: pageSize)
            let index = int(0..<max(1, words))
            let at = block + 8 + 8 * index
            guard at + 8 <= slot * pageSize + pageSize else { return }
            let word = load64(at)
            switch int(0..<5) {
            case 0:
                let value = [0, 1, words - 1, words + 1, capacity, capacity + 1, Int(UInt32.max)][int(0..<7)]
                store32(UInt32(truncatingIfNeeded: max(0, value)), slot * pageSize + MetaPage.Offset.carriedWordCount)
                applied.append("forgeCarriedFreePages \(slot) word count \(value)")
            case 1:
                let page = forgedPage(near: word & 0xFF_FFFF_FFFF)
                store64(page, at)
                applied.append("forgeCarriedFreePages \(slot) word \(index) page \(page)")
            case 2:
                // A page of the template's trees or its free tree: well formed, but not free.
                let trees = template.pages.map(\.number) + template.freeTreePages
                let page = UInt64(trees[int(0..<trees.count)])
                store64(page, at)
                applied.append("forgeCarriedFreePages \(slot) word \(index) names page \(page)")
            case 3:
                let other = block + 8 + 8 * int(0..<max(1, words))
                store64(load64(other), at)
                applied.append("forgeCarriedFreePages \(slot) word \(index) copies another")
            default:
                let transaction = load64(slot * pageSize + MetaPage.Offset.transactionID)
                let choices: [UInt64] = [0, 1, transaction &- 1, transaction, transaction &+ 1, (1 << 62) - 1]
                let freedBy = choices[int(0..<choices.count)]
                store64(chance(80) ? UInt64(1) << 63 | freedBy : freedBy, at)
                applied.append("forgeCarriedFreePages \(slot) word \(index) group freed by \(freedBy)")
            }
            if chance(85) { resealCarried(slot) } else { applied.append("(carried checksum left stale)") }
            if chance(90) { resealMeta(slot) } else { applied.append("(meta checksum left stale)") }
        case .forgePageList:
            // The pages a meta names for verification at open: counts, runs pointing elsewhere
            // (other pages, metas, past the end, pages of older commits), out of order, too long.
            let slot = chance(80) ? template.newestMetaSlot : 1 - template.newestMetaSlot
            let base = slot * pageSize
            let count = Int(load(base + MetaPage.Offset.runCount, width: 4))
            let list = base + MetaPage.encodedSize
            let capacity = MetaPage.runCapacity(pageSize: pageSize)
            let index = int(0..<max(1, count))
            let word = load64(list + 8 * index)
            let (first, length) = (word >> 24, word & 0xFF_FFFF)
            switch int(0..<5) {
            case 0:
                let value = [0, 1, count - 1, count + 1, capacity, capacity + 1, Int(UInt32.max)][int(0..<7)]
                store32(UInt32(truncatingIfNeeded: value), base + MetaPage.Offset.runCount)
                applied.append("forgePageList \(slot) run count \(value)")
            case 1:
                let page = forgedPage(near: first) & 0xFF_FFFF_FFFF
                store64(page << 24 | length, list + 8 * index)
                applied.append("forgePageList \(slot) run \(index) first page \(page)")
            case 2:
                let value = [0, 1, length &- 1, length &+ 1, 0xFF_FFFF, 512, 513][int(0..<7)] & 0xFF_FFFF
                store64(first << 24 | value, list + 8 * index)
                applied.append("forgePageList \(slot) run \(index) length \(value)")
            case 3:
                // A run naming one page of the template's trees (most were written by older commits).
                let page = UInt64(template.pages[int(0..<template.pages.count)].number)
                store64(page << 24 | 1, list + 8 * index)
                applied.append("forgePageList \(slot) run \(index) names page \(page)")
            default:
                let other = int(0..<max(1, count))
                let otherWord = load64(list + 8 * other)
                store64(otherWord, list + 8 * index)
                store64(word, list + 8 * other)
                applied.append("forgePageList \(slot) runs \(index) and \(other) swapped")
            }
            if chance(85) { resealPageList(slot) } else { applied.append("(page list checksum left stale)") }
            if chance(90) { resealMeta(slot) } else { applied.append("(meta checksum left stale)") }
        case .forgeCatalogRecord:
            guard let leaf = template.catalogPages.last else { return }
            let base = leaf * pageSize
            let count = load16(base + PageLayout.countOffset)
            guard count > 0 else { return }
            let index = int(0..<count)
            let node = base + load16(base + PageLayout.headerSize + 2 * index)
            let value = node + PageLayout.leafNodeHeader + load16(node + 2)
            switch int(0..<3) {
            case 0:
                let root = forgedPage(near: load64(value))
                store64(root, value)
                applied.append("forgeCatalogRecord entry \(index) root \(root)")
            case 1:
                let depth = [0, 1, 2, 4, 32, 33][int(0..<6)]
                store16(depth, value + 40)
                applied.append("forgeCatalogRecord entry \(index) depth \(depth)")
            default:
                store64(UInt64(int(0..<5000)), value + 8)
                applied.append("forgeCatalogRecord entry \(index) entries")
            }
            reseal(leaf)
        case .forgeFreeList:
            guard let leaf = template.freeTreePages.last else { return }
            let base = leaf * pageSize
            let count = load16(base + PageLayout.countOffset)
            guard count > 0 else { return }
            let index = int(0..<count)
            let node = base + load16(base + PageLayout.headerSize + 2 * index)
            let valueLength = Int(load(node + 4, width: 4))
            guard valueLength >= 8 else { return }
            let entry = node + PageLayout.leafNodeHeader + load16(node + 2) + 8 * int(0..<(valueLength / 8))
            // A live page listed as free, a meta, a page past the end, a duplicate.
            let page = forgedPage(near: load64(entry))
            store64(page, entry)
            reseal(leaf)
            applied.append("forgeFreeList record \(index) lists page \(page)")
        case .forgeOverflow:
            guard !template.overflowRuns.isEmpty else { return }
            let run = template.overflowRuns[int(0..<template.overflowRuns.count)]
            let base = run * pageSize
            switch int(0..<3) {
            case 0:
                let choices: [UInt32] = [0, 1, 2, 3, 1000, UInt32.max]
                let value = choices[int(0..<choices.count)]
                store32(value, base + PageLayout.overflowCountOffset)
                applied.append("forgeOverflow run \(run) page count \(value)")
            case 1:
                set(base + PageLayout.kindOffset, PageKind.leaf.rawValue)
                applied.append("forgeOverflow run \(run) kind leaf")
            default:
                store64(forgedPage(near: UInt64(run)), base)
                applied.append("forgeOverflow run \(run) page number")
            }
        }
    }
}
