import Testing
import StrataTestFixtures
@testable import StrataCore

/// `Page.validateHeap`: its one-pass proof for packed heaps (`heapIsPacked`) never accepts a heap
/// the exact node-by-node check (`validateHeapNodeByNode`, the only check before it) refuses,
/// every valid heap Strata writes takes the one-pass proof in any slot order, and crafted corrupt
/// heaps each get a typed `corruptPage`.
@Suite struct PageHeapTests {
    static let pageSize = 4096
    static let pageNumber: UInt64 = 9

    /// A node to lay out by hand: leaf nodes hold `keyLength` + `valueLength` bytes after their
    /// header (8 when `overflow`), branch nodes `keyLength`.
    struct CraftedNode {
        var start: Int
        var keyLength: Int
        var valueLength = 0
        var overflow = false
    }

    /// A page whose slots point at `nodes`, in the given order, with the heap starting at `upper`.
    static func craft(_ kind: PageKind, upper: Int, _ nodes: [CraftedNode]) -> PageBuffer {
        let buffer = PageBuffer(pageSize: pageSize, number: pageNumber)
        buffer.memory.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        buffer.initializeTreePage(kind: kind)
        let memory = buffer.memory
        memory.storeBytes(of: UInt16(nodes.count), toByteOffset: PageLayout.countOffset, as: UInt16.self)
        memory.storeBytes(of: UInt16(PageLayout.headerSize + 2 * nodes.count), toByteOffset: PageLayout.lowerOffset, as: UInt16.self)
        memory.storeBytes(of: UInt16(upper), toByteOffset: PageLayout.upperOffset, as: UInt16.self)
        for (index, node) in nodes.enumerated() {
            memory.storeBytes(of: UInt16(node.start), toByteOffset: PageLayout.headerSize + 2 * index, as: UInt16.self)
        }
        // Headers are written in slot order (a node nested in an earlier one is written over it),
        // only where they fit between `upper` and the page end.
        let headerSize = kind == .leaf ? PageLayout.leafNodeHeader : PageLayout.branchNodeHeader
        for node in nodes where node.start >= upper && node.start + headerSize <= pageSize {
            let at = memory + node.start
            if kind == .leaf {
                at.storeBytes(of: node.overflow ? LeafFlags.overflow : 0, as: UInt8.self)
                at.storeBytes(of: UInt16(node.keyLength), toByteOffset: 2, as: UInt16.self)
                at.storeBytes(of: UInt32(node.valueLength), toByteOffset: 4, as: UInt32.self)
            } else {
                at.storeBytes(of: UInt16(node.keyLength), toByteOffset: 8, as: UInt16.self)
            }
        }
        return buffer
    }

    enum Verdict: Equatable { case valid, corrupt, untyped }

    static func verdict(_ check: () throws -> Void) -> Verdict {
        do {
            try check()
            return .valid
        } catch StrataError.corruptPage(page: pageNumber, reason: _) {
            return .corrupt
        } catch {
            return .untyped
        }
    }

    /// The fast and the exact check agree on `buffer`; returns their verdict.
    @discardableResult
    static func agreedVerdict(_ buffer: PageBuffer, sourceLocation: SourceLocation = #_sourceLocation) throws -> Verdict {
        let page = try buffer.page()
        let reference = verdict { try page.validateHeapNodeByNode() }
        let checked = verdict { try page.validateHeap() }
        #expect(reference != .untyped && checked == reference, sourceLocation: sourceLocation)
        // Soundness of the one-pass proof: it never accepts what the exact check refuses.
        if page.heapIsPacked() { #expect(reference == .valid, sourceLocation: sourceLocation) }
        return checked
    }

    /// Leaf nodes of 8 + 4 + 20 = 32 bytes packed down from the page end: node i at 4096 - 32(i+1).
    static func packedLeafNodes(_ count: Int) -> [CraftedNode] {
        (0..<count).map { CraftedNode(start: pageSize - 32 * ($0 + 1), keyLength: 4, valueLength: 20) }
    }

    @Test func craftedHeaps() throws {
        let n = 6
        let upper = PageHeapTests.pageSize - 32 * n
        let packed = PageHeapTests.packedLeafNodes(n)
        func leaf(_ nodes: [CraftedNode], upper: Int = upper) throws -> Verdict {
            try PageHeapTests.agreedVerdict(PageHeapTests.craft(.leaf, upper: upper, nodes))
        }
        // Valid: reverse heap order, heap order, and an empty page.
        #expect(try leaf(packed) == .valid)
        #expect(try leaf(packed.reversed()) == .valid)
        #expect(try leaf([], upper: PageHeapTests.pageSize) == .valid)
        // Valid with holes (Strata never writes them, but they are not corrupt): the exact check decides.
        #expect(try leaf(Array(packed.dropFirst())) == .valid)                   // hole at the page end
        #expect(try leaf(Array(packed.dropLast()), upper: upper) == .valid)      // hole at upper
        #expect(try leaf([], upper: upper) == .valid)
        var holed = packed
        holed.remove(at: 2)
        #expect(try leaf(holed) == .valid)                                       // hole in the middle
        // Overlapping neighbours, in slot order and out of it.
        var overlapping = packed
        overlapping[1].start += 4
        #expect(try leaf(overlapping) == .corrupt)
        #expect(try leaf(overlapping.reversed()) == .corrupt)
        // Overlap hidden by a gap of the same length: the sizes still add up to the heap.
        var hidden = packed
        hidden[3].start += 8 // 3 now overlaps 2 by 8 bytes; 8 bytes free below it
        #expect(try leaf(hidden) == .corrupt)
        #expect(try leaf([hidden[3], hidden[0], hidden[5], hidden[2], hidden[4], hidden[1]]) == .corrupt)
        // Duplicate starts (one node twice; or two different sizes at one start).
        var duplicate = packed
        duplicate[4] = duplicate[3]
        #expect(try leaf(duplicate) == .corrupt)
        // A node nested inside another, and a second copy of a node inside a larger one.
        var nested = packed
        nested[0].valueLength += 32 // node 0 now spans node 1 too: wrong sum; 1 nested inside 0
        nested[0].start -= 32
        nested[1] = CraftedNode(start: nested[0].start + 8, keyLength: 4, valueLength: 4)
        #expect(try leaf(nested) == .corrupt)
        #expect(try leaf(Array(nested.reversed())) == .corrupt)
        // A node crossing the page end, by its key and by its value.
        var crossing = packed
        crossing[0].keyLength += 1
        #expect(try leaf(crossing) == .corrupt)
        crossing = packed
        crossing[0].valueLength = Int(UInt32.max)
        #expect(try leaf(crossing) == .corrupt)
        // A header that itself crosses the page end.
        #expect(try leaf([CraftedNode(start: PageHeapTests.pageSize - 4, keyLength: 0)], upper: PageHeapTests.pageSize - 4) == .corrupt)
        // A node starting below upper, inside the slot array, and outside the page.
        var below = packed
        below[5].start -= 2
        #expect(try leaf(below) == .corrupt)
        below = packed
        below[5].start = PageLayout.headerSize
        #expect(try leaf(below) == .corrupt)
        below = packed
        below[5].start = 60_000
        #expect(try leaf(below) == .corrupt)
        // A node larger than a third of a page, packed and alone (sizes add up).
        let largest = PageLayout.maximumNodeSize(pageSize: PageHeapTests.pageSize)
        let big = CraftedNode(start: PageHeapTests.pageSize - largest, keyLength: 8, valueLength: largest - 16)
        #expect(try leaf([big], upper: big.start) == .corrupt) // node + slot = largest + 2
        let fits = CraftedNode(start: PageHeapTests.pageSize - largest + 2, keyLength: 8, valueLength: largest - 18)
        #expect(try leaf([fits], upper: fits.start) == .valid)
        // Overflow nodes count 8 payload bytes whatever their value length.
        let overflow = CraftedNode(start: PageHeapTests.pageSize - 20, keyLength: 4, valueLength: 1 << 30, overflow: true)
        #expect(try leaf([overflow], upper: overflow.start) == .valid)
        // Branch nodes: 10-byte headers.
        let branch = (0..<n).map { CraftedNode(start: PageHeapTests.pageSize - 16 * ($0 + 1), keyLength: 6) }
        #expect(try PageHeapTests.agreedVerdict(PageHeapTests.craft(.branch, upper: PageHeapTests.pageSize - 16 * n, branch)) == .valid)
        var branchOverlap = branch
        branchOverlap[2].keyLength += 1
        branchOverlap[3].keyLength -= 1
        #expect(try PageHeapTests.agreedVerdict(PageHeapTests.craft(.branch, upper: PageHeapTests.pageSize - 16 * n, branchOverlap)) == .corrupt)
    }

    /// A page built by `PageBuffer` (packed, random node sizes, inserted at random slots so that
    /// slot order and heap order differ), leaf or branch.
    static func randomPage(_ random: inout SeededGenerator) -> PageBuffer {
        let kind: PageKind = Bool.random(using: &random) ? .leaf : .branch
        let buffer = PageBuffer(pageSize: pageSize, number: pageNumber)
        buffer.memory.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        buffer.initializeTreePage(kind: kind)
        let bytes = [UInt8](repeating: 0x5A, count: 400)
        let target = Int.random(in: 1...200, using: &random) // a branch page is never empty
        bytes.withUnsafeBytes { raw in
            for _ in 0..<target {
                let keyLength = Int.random(in: 0...(Bool.random(using: &random) ? 12 : 200), using: &random)
                let valueLength = Int.random(in: 0...(Bool.random(using: &random) ? 16 : 400), using: &random)
                let overflow = Int.random(in: 0..<8, using: &random) == 0
                let nodeSize = kind == .branch ? PageLayout.branchNodeHeader + keyLength
                    : PageBuffer.leafNodeSize(keyCount: keyLength, valueCount: valueLength, overflow: overflow)
                guard nodeSize + 2 <= PageLayout.maximumNodeSize(pageSize: pageSize), buffer.freeSpace >= nodeSize + 2 else { break }
                let index = Int.random(in: 0...buffer.count, using: &random)
                let key = UnsafeRawBufferPointer(rebasing: raw[0..<keyLength])
                if kind == .branch {
                    buffer.insertBranch(at: index, key: key, child: 3)
                } else if overflow {
                    buffer.insertLeafOverflow(at: index, key: key, valueLength: 1 << 20, overflowPage: 3)
                } else {
                    buffer.insertLeaf(at: index, key: key, value: UnsafeRawBufferPointer(rebasing: raw[0..<valueLength]))
                }
            }
        }
        return buffer
    }

    /// Every valid page Strata writes takes the one-pass proof, in any slot order.
    /// A key longer than `maximumKeySize` in a node that still fits the node size cap: no page
    /// Strata writes holds one, and a forged one that became a separator once reached
    /// `PageBuffer.reserveNode`'s precondition (a crash) when the parent had no room for it.
    @Test func keysLongerThanAnyKeyStrataWritesAreCorrupt() throws {
        let maximumKey = PageLayout.maximumKeySize(pageSize: PageHeapTests.pageSize)
        for kind in [PageKind.leaf, .branch] {
            for overflow in kind == .leaf ? [false, true] : [false] {
                let header = kind == .leaf ? PageLayout.leafNodeHeader + (overflow ? 8 : 0) : PageLayout.branchNodeHeader
                // The longest key the node size cap alone lets through (1,344 bytes in a leaf).
                let capped = PageLayout.maximumNodeSize(pageSize: PageHeapTests.pageSize) - 2 - header
                for (keyLength, expected) in [(maximumKey, Verdict.valid), (maximumKey + 1, .corrupt), (capped, .corrupt)] {
                    let size = header + keyLength
                    try #require(size + 2 <= PageLayout.maximumNodeSize(pageSize: PageHeapTests.pageSize))
                    let node = CraftedNode(start: PageHeapTests.pageSize - size, keyLength: keyLength, overflow: overflow)
                    let verdict = try PageHeapTests.agreedVerdict(PageHeapTests.craft(kind, upper: node.start, [node]))
                    #expect(verdict == expected, "\(kind) key of \(keyLength) bytes, overflow \(overflow)")
                }
            }
        }
    }

    @Test func validHeapsInEverySlotOrderArePacked() throws {
        var random = SeededGenerator(seed: testSeed("validHeapsInEverySlotOrder"))
        for _ in 0..<300 {
            let buffer = PageHeapTests.randomPage(&random)
            let count = buffer.count
            var slots = (0..<count).map { buffer.memory.loadUnaligned(fromByteOffset: PageLayout.headerSize + 2 * $0, as: UInt16.self) }
            for order in 0..<3 {
                if order == 1 { slots.sort() } else if order == 2 { slots.shuffle(using: &random) }
                for (index, slot) in slots.enumerated() {
                    buffer.memory.storeBytes(of: slot, toByteOffset: PageLayout.headerSize + 2 * index, as: UInt16.self)
                }
                #expect(try buffer.page().heapIsPacked(), "count \(count), order \(order)")
                #expect(try PageHeapTests.agreedVerdict(buffer) == .valid)
            }
        }
    }

    /// Differential: random valid pages, mutated where it hurts (slot offsets moved a little, set
    /// to another slot's offset, or anywhere; key, value lengths and flags changed; upper moved):
    /// `validateHeap` answers as the exact check does, and the one-pass proof never accepts a
    /// page the exact check refuses.
    @Test func mutatedHeapsAgreeWithTheExactCheck() throws {
        var random = SeededGenerator(seed: testSeed("mutatedHeaps"))
        var verdicts: [Verdict: Int] = [:]
        for _ in 0..<20_000 {
            let buffer = PageHeapTests.randomPage(&random)
            let memory = buffer.memory
            let count = buffer.count
            let isLeaf = buffer.kind == .leaf
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let slotOffset = PageLayout.headerSize + 2 * Int.random(in: 0..<max(count, 1), using: &random)
                let slot = Int(memory.loadUnaligned(fromByteOffset: slotOffset, as: UInt16.self))
                let nudge = Int.random(in: -24...24, using: &random)
                // Node bytes are edited only past the slot array (the header and slots stay sane).
                let editable = slot >= PageLayout.headerSize + 2 * count
                switch count > 0 ? Int.random(in: 0..<7, using: &random) : 6 {
                case 0: // move a node a little
                    memory.storeBytes(of: UInt16(clamping: slot + nudge), toByteOffset: slotOffset, as: UInt16.self)
                case 1: // point at another node's start
                    let other = PageLayout.headerSize + 2 * Int.random(in: 0..<count, using: &random)
                    memory.storeBytes(of: memory.loadUnaligned(fromByteOffset: other, as: UInt16.self), toByteOffset: slotOffset, as: UInt16.self)
                case 2: // anywhere
                    memory.storeBytes(of: UInt16.random(in: 0...UInt16.max, using: &random), toByteOffset: slotOffset, as: UInt16.self)
                case 3 where editable && slot + 10 <= PageHeapTests.pageSize: // key length
                    let at = slot + (isLeaf ? 2 : 8)
                    let old = Int(memory.loadUnaligned(fromByteOffset: at, as: UInt16.self))
                    memory.storeBytes(of: UInt16(clamping: old + nudge), toByteOffset: at, as: UInt16.self)
                case 4 where editable && isLeaf && slot + 8 <= PageHeapTests.pageSize: // value length
                    let old = Int(memory.loadUnaligned(fromByteOffset: slot + 4, as: UInt32.self))
                    memory.storeBytes(of: UInt32(clamping: old + nudge), toByteOffset: slot + 4, as: UInt32.self)
                case 5 where editable && isLeaf && slot + 8 <= PageHeapTests.pageSize: // overflow flag
                    memory.storeBytes(of: memory.load(fromByteOffset: slot, as: UInt8.self) ^ LeafFlags.overflow, toByteOffset: slot, as: UInt8.self)
                default: // upper, kept within the page header's own rules
                    let upper = Int(memory.loadUnaligned(fromByteOffset: PageLayout.upperOffset, as: UInt16.self))
                    let moved = min(max(upper + nudge, PageLayout.headerSize + 2 * count), PageHeapTests.pageSize)
                    memory.storeBytes(of: UInt16(moved), toByteOffset: PageLayout.upperOffset, as: UInt16.self)
                }
            }
            verdicts[try PageHeapTests.agreedVerdict(buffer), default: 0] += 1
        }
        print("[mutatedHeaps] verdicts \(verdicts)")
        #expect(verdicts[.corrupt, default: 0] > 1_000 && verdicts[.valid, default: 0] > 100)
    }
}
