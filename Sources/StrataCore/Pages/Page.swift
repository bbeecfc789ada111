import Glibc

/// A read-only, bounds-checked view of one B+tree page (in the shared mapping or a dirty buffer).
///
/// Nothing read from a page is trusted: `Page.init(validating:)` checks the header, and every node
/// accessor checks that the node and its key and inline value lie inside the page. A violation is a
/// `StrataError.corruptPage`, never an out-of-bounds read.
struct Page {
    let base: UnsafeRawPointer
    let size: Int
    let number: UInt64
    let kind: PageKind
    let count: Int

    /// Validates the header of page `number` located at `base`. Every field is checked on every
    /// visit (a page of the mapping can change under a reader that lost its pin, and a check once
    /// per page would need a table); inlined, they cost a few compares.
    @inline(__always)
    init(validating base: UnsafeRawPointer, size: Int, number: UInt64) throws {
        self.base = base
        self.size = size
        self.number = number
        let storedNumber = base.loadUnaligned(fromByteOffset: PageLayout.pageNumberOffset, as: UInt64.self)
        guard storedNumber == number else {
            throw StrataError.corruptPage(page: number, reason: "header names page \(storedNumber)")
        }
        let rawKind = base.load(fromByteOffset: PageLayout.kindOffset, as: UInt8.self)
        guard rawKind == PageKind.branch.rawValue || rawKind == PageKind.leaf.rawValue else {
            throw StrataError.corruptPage(page: number, reason: "not a tree page")
        }
        kind = rawKind == PageKind.leaf.rawValue ? .leaf : .branch
        let count = Int(base.loadUnaligned(fromByteOffset: PageLayout.countOffset, as: UInt16.self))
        let lower = Int(base.loadUnaligned(fromByteOffset: PageLayout.lowerOffset, as: UInt16.self))
        let upper = Int(base.loadUnaligned(fromByteOffset: PageLayout.upperOffset, as: UInt16.self))
        guard lower == PageLayout.headerSize + 2 * count, lower <= upper, upper <= size, count > 0 || kind == .leaf else {
            throw StrataError.corruptPage(page: number, reason: "slot array (count \(count), lower \(lower), upper \(upper)) is inconsistent")
        }
        self.count = count
    }

    var isLeaf: Bool { kind == .leaf }
    var transactionID: UInt64 { base.loadUnaligned(fromByteOffset: PageLayout.transactionOffset, as: UInt64.self) }
    var upper: Int { Int(base.loadUnaligned(fromByteOffset: PageLayout.upperOffset, as: UInt16.self)) }
    /// Wrapping arithmetic here and in the node accessors: `count`, slot offsets and key lengths
    /// are 16-bit and a node index is a position in a page, so nothing can overflow, and the overflow
    /// checks were a fifth of a search's probe.
    var lower: Int { PageLayout.headerSize &+ 2 &* count }
    /// Bytes used by nodes and their slots.
    var usedSpace: Int { size - upper + 2 * count }

    @inline(__always) func nodeOffset(_ index: Int) throws -> Int {
        let offset = Int(base.loadUnaligned(fromByteOffset: PageLayout.headerSize &+ 2 &* index, as: UInt16.self))
        guard offset >= lower, offset < size else {
            throw StrataError.corruptPage(page: number, reason: "node \(index) offset \(offset) outside the heap")
        }
        return offset
    }

    // MARK: Leaf nodes

    struct LeafNode {
        let key: UnsafeRawBufferPointer
        let flags: UInt8
        let valueLength: Int
        /// Inline value bytes, or the 8-byte overflow page number when `isOverflow`.
        let payload: UnsafeRawPointer
        var isOverflow: Bool { flags & LeafFlags.overflow != 0 }
        var overflowPage: UInt64 { payload.loadUnaligned(as: UInt64.self) }
        /// Bytes the node occupies in the heap.
        var storedSize: Int { PageLayout.leafNodeHeader + key.count + (isOverflow ? 8 : valueLength) }
    }

    @inline(__always) func leaf(_ index: Int) throws -> LeafNode {
        let offset = try nodeOffset(index)
        guard offset + PageLayout.leafNodeHeader <= size else {
            throw StrataError.corruptPage(page: number, reason: "leaf node \(index) header crosses the page end")
        }
        let flags = base.load(fromByteOffset: offset, as: UInt8.self)
        let keyLength = Int(base.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self))
        let valueLength = Int(base.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let keyStart = offset + PageLayout.leafNodeHeader
        let payloadLength = flags & LeafFlags.overflow != 0 ? 8 : valueLength
        guard keyStart + keyLength + payloadLength <= size else {
            throw StrataError.corruptPage(page: number, reason: "leaf node \(index) crosses the page end")
        }
        return LeafNode(key: UnsafeRawBufferPointer(start: base + keyStart, count: keyLength),
                        flags: flags, valueLength: valueLength, payload: base + keyStart + keyLength)
    }

    @inline(__always) func leafKey(_ index: Int) throws -> UnsafeRawBufferPointer {
        try key(index, kind: "leaf", headerSize: PageLayout.leafNodeHeader, keyLengthOffset: 2)
    }

    /// The key of node `index`, whose header is `headerSize` bytes with the u16 key length at
    /// `keyLengthOffset` and the key right after it; both checked to lie inside the page.
    @inline(__always)
    private func key(_ index: Int, kind: StaticString, headerSize: Int, keyLengthOffset: Int) throws -> UnsafeRawBufferPointer {
        let offset = try nodeOffset(index)
        guard offset &+ headerSize <= size else {
            throw StrataError.corruptPage(page: number, reason: "\(kind) node \(index) header crosses the page end")
        }
        let keyLength = Int(base.loadUnaligned(fromByteOffset: offset &+ keyLengthOffset, as: UInt16.self))
        let keyStart = offset &+ headerSize
        guard keyStart &+ keyLength <= size else {
            throw StrataError.corruptPage(page: number, reason: "\(kind) key \(index) crosses the page end")
        }
        return UnsafeRawBufferPointer(start: base + keyStart, count: keyLength)
    }

    // MARK: Branch nodes

    @inline(__always) func branchKey(_ index: Int) throws -> UnsafeRawBufferPointer {
        try key(index, kind: "branch", headerSize: PageLayout.branchNodeHeader, keyLengthOffset: 8)
    }

    @inline(__always) func child(_ index: Int) throws -> UInt64 {
        let offset = try nodeOffset(index)
        guard offset + PageLayout.branchNodeHeader <= size else {
            throw StrataError.corruptPage(page: number, reason: "branch node \(index) header crosses the page end")
        }
        return base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }

    /// A full check of the node heap: every node inside `upper..<size`, at most a third of a page
    /// (`PageLayout.maximumNodeSize`, splits rely on it) with a key of at most
    /// `PageLayout.maximumKeySize` (separators rely on it), and no two overlapping. Reads only
    /// validate what they touch; a page about to be modified (copied by a write transaction) is
    /// checked whole, so the editing code can rely on sizes adding up.
    ///
    /// Throws `StrataError.corruptPage` naming the first violation. Pages Strata writes are packed
    /// (`PageBuffer` leaves no holes), which `heapIsPacked` proves in one pass; any other heap,
    /// valid with holes or corrupt, gets the exact check `validateHeapNodeByNode`, which also
    /// words the error.
    func validateHeap() throws {
        if heapIsPacked() { return }
        try validateHeapNodeByNode()
    }

    /// Whether the heap is exactly tiled by its nodes: every node individually valid (inside
    /// `upper..<size`, no larger than `maximumNodeSize`, its key no longer than
    /// `maximumKeySize`) and, together, covering `upper..<size` with no byte twice. `true` proves
    /// everything `validateHeap` promises; `false` proves nothing (a valid heap with holes
    /// answers `false` too).
    ///
    /// One pass reads each node's slot offset and header with one bounds check, sums the node
    /// sizes, marks each node's start in `starts` (a bitmap, one bit per byte of the page) and
    /// keeps its end in `ends`; a second pass looks each end up in `starts` (both on the stack for
    /// 4 KiB pages with the node counts Strata writes; a larger page or a corrupt count may put
    /// them on the heap, which is only slower). The heap is tiled exactly when
    /// 1. every node lies in `upper..<size` (checked per node; each is non-empty: headers are
    ///    8 or 10 bytes),
    /// 2. a node starts at `upper` (or there are no nodes and `upper == size`),
    /// 3. every node ends at `size` or where some node starts,
    /// 4. the node sizes add up to `size - upper`.
    /// Proof: (1-3) leave no uncovered byte: take the lowest byte `p` of a gap; `p == upper` is
    /// covered by (2); otherwise byte `p - 1` is covered by a node that must end at `p`, so by (3)
    /// a node starts at `p` and covers it. So the union of the nodes is `upper..<size`, whose
    /// length (4) says equals the sum of their lengths: no byte is counted twice, no overlap.
    /// Every condition is needed: without (3) two overlapping nodes can hide a gap of the same
    /// length from (4) (nodes 100..<120 and 110..<130 and a gap 130..<140 add up to 100..<140),
    /// and without (2) the gap can sit at `upper`.
    func heapIsPacked() -> Bool {
        let upper = self.upper, size = self.size, count = self.count
        guard count > 0 else { return upper == size }
        let largest = PageLayout.maximumNodeSize(pageSize: size)
        let largestKey = PageLayout.maximumKeySize(pageSize: size)
        let isLeaf = kind == .leaf
        let headerSize = isLeaf ? PageLayout.leafNodeHeader : PageLayout.branchNodeHeader
        let words = size &>> 6 // page sizes are multiples of 64
        let firstWord = upper &>> 6
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { bitmap -> Bool in
          withUnsafeTemporaryAllocation(of: UInt16.self, capacity: count) { endBuffer -> Bool in
            let starts = bitmap.baseAddress!, ends = endBuffer.baseAddress!
            // Only words the heap can touch are read below.
            (starts + firstWord).initialize(repeating: 0, count: words &- firstWord)
            let slots = base + PageLayout.headerSize
            var total = 0
            for index in 0..<count {
                let start = Int(slots.loadUnaligned(fromByteOffset: index &* 2, as: UInt16.self))
                guard start >= upper, start &+ headerSize <= size else { return false }
                let node = base + start
                let end: Int
                if isLeaf {
                    let keyLength = Int(node.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
                    guard keyLength <= largestKey else { return false }
                    let payload = node.load(as: UInt8.self) & LeafFlags.overflow != 0
                        ? 8 : Int(node.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
                    end = start &+ PageLayout.leafNodeHeader &+ keyLength &+ payload
                } else {
                    let keyLength = Int(node.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
                    guard keyLength <= largestKey else { return false }
                    end = start &+ PageLayout.branchNodeHeader &+ keyLength
                }
                // `end - start + 2`: the node and its slot, as `validateHeapNodeByNode` counts.
                guard end <= size, end &- start &+ 2 <= largest else { return false }
                total &+= end &- start
                starts[start &>> 6] |= 1 &<< UInt64(start & 63)
                ends[index] = UInt16(truncatingIfNeeded: end) // <= size <= 32768
            }
            guard total == size &- upper, starts[firstWord] & (1 &<< UInt64(upper & 63)) != 0 else { return false }
            for index in 0..<count {
                let end = Int(ends[index])
                guard end == size || starts[end &>> 6] & (1 &<< UInt64(end & 63)) != 0 else { return false }
            }
            return true
          }
        }
    }

    /// The exact check for any heap, packed or not (the only one before `heapIsPacked`), node by
    /// node through the checked accessors so that the error names the node and the reason.
    func validateHeapNodeByNode() throws {
        let upper = self.upper
        let largest = PageLayout.maximumNodeSize(pageSize: size)
        let largestKey = PageLayout.maximumKeySize(pageSize: size)
        // Two nodes overlap exactly when one starts at the other's start or inside it. A bitmap of
        // start offsets (one bit per byte of the page) finds both without sorting the nodes.
        try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: size / 64) { starts in
            starts.initialize(repeating: 0)
            try withUnsafeTemporaryAllocation(of: UInt32.self, capacity: max(count, 1)) { spans in
                for index in 0..<count {
                    let start = try nodeOffset(index)
                    let end: Int, keyLength: Int
                    if kind == .leaf {
                        let node = try leaf(index)
                        end = start + node.storedSize
                        keyLength = node.key.count
                    } else {
                        keyLength = (try branchKey(index)).count
                        end = start + PageLayout.branchNodeHeader + keyLength
                    }
                    // Inserting a longer key as a separator may need more room than a split
                    // guarantees (`PageLayout.maximumKeySize`); Strata never writes one.
                    guard keyLength <= largestKey else {
                        throw StrataError.corruptPage(page: number, reason: "node \(index) has a key of \(keyLength) bytes, longer than any key Strata writes (\(largestKey))")
                    }
                    guard start >= upper, end <= size else {
                        throw StrataError.corruptPage(page: number, reason: "node \(index) lies outside the heap \(upper)..<\(size)")
                    }
                    // Splits rely on every node being at most a third of a page.
                    guard end - start + 2 <= largest else {
                        throw StrataError.corruptPage(page: number, reason: "node \(index) is larger than any node Strata writes")
                    }
                    let (word, bit) = (start >> 6, UInt64(1) << UInt64(start & 63))
                    guard starts[word] & bit == 0 else {
                        throw StrataError.corruptPage(page: number, reason: "node \(index) starts where another node starts (\(start))")
                    }
                    starts[word] |= bit
                    spans[index] = UInt32(start) << 16 | UInt32(end) // both <= 32768
                }
                for (index, span) in spans[0..<count].enumerated()
                where Page.anyBit(in: starts, from: Int(span >> 16) + 1, to: Int(span & 0xFFFF)) {
                    throw StrataError.corruptPage(page: number, reason: "another node starts inside node \(index) (\(span >> 16)..<\(span & 0xFFFF))")
                }
            }
        }
    }

    /// Whether any bit in `from..<to` is set.
    @inline(__always)
    private static func anyBit(in words: UnsafeMutableBufferPointer<UInt64>, from: Int, to: Int) -> Bool {
        guard from < to else { return false }
        var word = from >> 6
        let lastWord = (to - 1) >> 6
        var mask = UInt64.max << UInt64(from & 63)
        while word < lastWord {
            if words[word] & mask != 0 { return true }
            word += 1
            mask = .max
        }
        mask &= UInt64.max >> UInt64(63 - ((to - 1) & 63))
        return words[word] & mask != 0
    }

    // MARK: Search

    /// Leaf: the first index whose key is >= `key`, and whether it is equal.
    /// Branch: the child index to descend into (the last key <= `key`; key 0 is minus infinity),
    /// and `exact` false: no caller needs to know whether a separator equals the key, and asking
    /// cost one more key comparison per branch of every descent.
    ///
    /// A key of at least eight bytes is compared with each node key's first eight bytes as one
    /// big-endian word first (`SearchHead`): most probes of a search differ there, and
    /// `compareKeys` then is not called.
    @inline(__always) func search(_ key: UnsafeRawBufferPointer) throws -> (index: Int, exact: Bool) {
        let head = SearchHead(key)
        if kind == .leaf {
            var low = 0, high = count
            while low < high {
                let middle = (low &+ high) >> 1
                let c = head.compare(try leafKey(middle), key)
                if c < 0 { low = middle + 1 } else if c > 0 { high = middle } else { return (middle, true) }
            }
            return (low, false)
        }
        // Branch: binary search over keys 1..<count.
        var low = 1, high = count
        while low < high {
            let middle = (low &+ high) >> 1
            let c = head.compare(try branchKey(middle), key)
            if c <= 0 { low = middle + 1 } else { high = middle }
        }
        return (low - 1, false)
    }
}

extension Page {
    /// The header fields every page shares, tree page or overflow run, read from raw bytes that
    /// are not trusted: callers compare each field with what they expect before using the page.
    struct Header {
        let base: UnsafeRawPointer

        init(_ base: UnsafeRawPointer) { self.base = base }

        var number: UInt64 { base.loadUnaligned(fromByteOffset: PageLayout.pageNumberOffset, as: UInt64.self) }
        var transactionID: UInt64 { base.loadUnaligned(fromByteOffset: PageLayout.transactionOffset, as: UInt64.self) }
        var kind: PageKind? { PageKind(rawValue: base.load(fromByteOffset: PageLayout.kindOffset, as: UInt8.self)) }
        /// The page count an overflow run's first page records (meaningless for other kinds).
        var overflowPageCount: Int { Int(base.loadUnaligned(fromByteOffset: PageLayout.overflowCountOffset, as: UInt32.self)) }
        var storedChecksum: UInt64 { base.loadUnaligned(fromByteOffset: PageLayout.checksumOffset, as: UInt64.self) }

        /// Whether the stored checksum is that of the `pageCount` pages starting here (1 for a
        /// tree page, the run's length for an overflow run), computed with the store's `checksum`.
        func checksumMatches(pageCount: Int, pageSize: Int, checksum: PageChecksum) -> Bool {
            storedChecksum == checksum.of(base, byteCount: pageCount * pageSize)
        }

        /// Whether this is the first page of the overflow run `number` of `pageCount` pages.
        func isOverflowRun(_ number: UInt64, pageCount: Int) -> Bool {
            self.number == number && kind == .overflow && overflowPageCount == pageCount
        }

        /// The `length` value bytes an overflow run holds after its header (the caller has
        /// checked the run with `isOverflowRun` and that it is long enough).
        func overflowValue(length: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(start: base + PageLayout.headerSize, count: length)
        }
    }

    /// The pages an overflow run holding `valueLength` bytes occupies (its header included).
    static func overflowPageCount(valueLength: Int, pageSize: Int) -> Int {
        (PageLayout.headerSize + valueLength + pageSize - 1) / pageSize
    }
}

/// memcmp order; a proper prefix sorts first. Only the sign of the result is meaningful.
///
/// Compares eight bytes at a time as big-endian words (the same order as memcmp) for the first
/// `wordComparedPrefix` bytes, then the rest of the common prefix with memcmp. Keys that share a
/// first word are common (zero-padded numbers, typed keys that start with the same prefix or
/// tag): a libc call per comparison was most of a branch search for them.
///
/// `equalWords`: how many leading eight-byte words the caller already found equal (both keys
/// hold them), which are not compared again.
@inline(__always) func compareKeys(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, equalWords: Int = 0) -> Int {
    let common = min(a.count, b.count)
    guard common > 0 else { return a.count - b.count }
    // Both buffers hold at least `common` bytes here, so the addresses exist.
    let x = a.baseAddress!, y = b.baseAddress!
    // Words the caller vouches for must lie in both keys (they are skipped, not read).
    assert(equalWords >= 0 && equalWords &<< 3 <= common, "compareKeys: more equal words than the keys hold")
    var offset = equalWords &<< 3
    let words = min(common, wordComparedPrefix) &>> 3
    while offset < words &<< 3 {
        let p = UInt64(bigEndian: x.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let q = UInt64(bigEndian: y.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        if p != q { return p < q ? -1 : 1 }
        offset &+= 8
    }
    if offset < common {
        if common &- offset < 8 {
            // The last few bytes, one at a time: cheaper than a call.
            while offset < common {
                let p = x.load(fromByteOffset: offset, as: UInt8.self), q = y.load(fromByteOffset: offset, as: UInt8.self)
                if p != q { return p < q ? -1 : 1 }
                offset &+= 1
            }
        } else {
            let result = memcmp(x + offset, y + offset, common &- offset)
            if result != 0 { return Int(result) }
        }
    }
    return a.count - b.count
}

/// The first eight bytes of a searched key as a big-endian word, so that a binary search compares
/// them with a node key's first eight by one load and one compare; `compareKeys` decides only
/// where they are equal, or where either key is shorter than eight bytes. Same order and sign
/// as `compareKeys` (the first differing word decides memcmp order).
struct SearchHead {
    /// Zero when `isWord` is false.
    let word: UInt64
    let isWord: Bool

    @inline(__always) init(_ key: UnsafeRawBufferPointer) {
        isWord = key.count >= 8
        word = isWord ? UInt64(bigEndian: key.baseAddress!.loadUnaligned(as: UInt64.self)) : 0
    }

    /// `compareKeys(nodeKey, key)`, where `key` is the key this head was made of. Loads only
    /// within `nodeKey` (eight bytes when it has them).
    @inline(__always) func compare(_ nodeKey: UnsafeRawBufferPointer, _ key: UnsafeRawBufferPointer) -> Int {
        var equalWords = 0
        if isWord, nodeKey.count >= 8 {
            let stored = UInt64(bigEndian: nodeKey.baseAddress!.loadUnaligned(as: UInt64.self))
            if stored != word { return stored < word ? -1 : 1 }
            equalWords = 1
        }
        // One call site: a second one made this too large to inline into `search`.
        return compareKeys(nodeKey, key, equalWords: equalWords)
    }
}

/// How many leading bytes `compareKeys` compares word by word before handing a long common
/// prefix to memcmp (whose vector loop wins on long runs of equal bytes).
let wordComparedPrefix = 64
