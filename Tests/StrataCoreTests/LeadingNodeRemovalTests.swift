import Testing
import StrataTestFixtures
@testable import StrataCore

/// `PageBuffer.removeLeadingNodes(_:)` (the one-pass removal `deleteLeading` uses) leaves exactly
/// the page that as many `removeNode(at: 0)` calls leave: the same entries in the same order,
/// the same free space, and a heap that still validates — whatever order the heap holds the
/// nodes in (random inserts and removals scatter it), for leaves naming overflow runs and for
/// branch pages too.
@Suite struct LeadingNodeRemovalTests {
    static let pageSize = 4096

    /// A page of `kind` filled by random inserts at random positions and a few random removals.
    static func scatteredPage(_ kind: PageKind, random: inout SeededGenerator) -> PageBuffer {
        let page = PageBuffer(pageSize: pageSize, number: 7)
        page.initializeTreePage(kind: kind)
        for step in 0..<400 {
            let key = (0..<Int.random(in: 1...40, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            let value = (0..<Int.random(in: 0...120, using: &random)).map { _ in UInt8(truncatingIfNeeded: step) }
            // A quarter of a leaf's nodes name an overflow run (their node is shorter than their value).
            let isOverflow = kind == .leaf && Int.random(in: 0..<4, using: &random) == 0
            let size = kind == .leaf ? PageBuffer.leafNodeSize(keyCount: key.count, valueCount: value.count, overflow: isOverflow)
                : PageLayout.branchNodeHeader + key.count
            guard page.freeSpace >= size + 2 else { break }
            let at = Int.random(in: 0...page.count, using: &random)
            key.withUnsafeBytes { keyBytes in
                if isOverflow {
                    page.insertLeafOverflow(at: at, key: keyBytes, valueLength: 5_000 + step, overflowPage: UInt64(1_000 + step))
                } else if kind == .leaf {
                    value.withUnsafeBytes { page.insertLeaf(at: at, key: keyBytes, value: $0) }
                } else {
                    page.insertBranch(at: at, key: keyBytes, child: UInt64(step + 2))
                }
            }
            if page.count > 3, Int.random(in: 0..<5, using: &random) == 0 {
                page.removeNode(at: Int.random(in: 0..<page.count, using: &random))
            }
        }
        return page
    }

    /// Every node's bytes as the page reads them, in slot order.
    static func nodes(of buffer: PageBuffer) throws -> [[UInt8]] {
        let page = try buffer.page()
        try page.validateHeap()
        return try (0..<page.count).map { index in
            if buffer.kind == .leaf {
                let node = try page.leaf(index)
                if node.isOverflow {
                    return Array(node.key) + [node.flags] + withUnsafeBytes(of: node.overflowPage) { Array($0) }
                        + withUnsafeBytes(of: node.valueLength) { Array($0) }
                }
                return Array(node.key) + [node.flags] + Array(UnsafeRawBufferPointer(start: node.payload, count: node.valueLength))
            }
            return Array(try page.branchKey(index)) + withUnsafeBytes(of: try page.child(index)) { Array($0) }
        }
    }

    @Test(arguments: [PageKind.leaf, .branch])
    func matchesOneByOneRemoval(kind: PageKind) throws {
        var random = SeededGenerator(seed: testSeed("removeLeadingNodes-\(kind)"))
        for _ in 0..<60 {
            let original = Self.scatteredPage(kind, random: &random)
            // A branch page keeps at least one child (an empty one is no valid page to read back).
            let removed = Int.random(in: 0...(kind == .leaf ? original.count : original.count - 1), using: &random)
            let bulk = PageBuffer(pageSize: Self.pageSize, number: 7)
            bulk.copy(from: original.memory, renumberAs: 7)
            bulk.removeLeadingNodes(removed)
            for _ in 0..<removed { original.removeNode(at: 0) }
            #expect(bulk.count == original.count)
            #expect(bulk.freeSpace == original.freeSpace)
            #expect(try Self.nodes(of: bulk) == Self.nodes(of: original))
        }
    }
}
