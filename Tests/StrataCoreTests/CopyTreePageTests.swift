import Glibc
import Testing
import StrataTestFixtures
@testable import StrataCore

/// `PageBuffer.copyTreePage`, the copy-on-write copy: the header, slot array and heap arrive
/// byte for byte, the free gap between them keeps the target's bytes, and the copy is the same
/// page (it validates, and every node reads back the same).
@Suite struct CopyTreePageTests {
    @Test func copiesTheUsedPartsAndLeavesTheGap() throws {
        var random = SeededGenerator(seed: testSeed("copyTreePage"))
        let size = PageHeapTests.pageSize
        let target = PageBuffer(pageSize: size, number: PageHeapTests.pageNumber)
        for _ in 0..<200 {
            let source = PageHeapTests.randomPage(&random)
            let lower = source.lower, upper = source.upper
            memset(target.memory, 0xEE, size)
            target.copyTreePage(from: source.memory, lower: lower, upper: upper)
            #expect(memcmp(target.memory, source.memory, lower) == 0)
            #expect(memcmp(target.memory + upper, source.memory + upper, size - upper) == 0)
            let gap = UnsafeRawBufferPointer(start: target.memory + lower, count: upper - lower)
            #expect(gap.allSatisfy { $0 == 0xEE })
            let original = try source.page(), copied = try target.page()
            try copied.validateHeap()
            #expect(copied.count == original.count && copied.kind == original.kind && copied.upper == original.upper)
            for index in 0..<original.count {
                #expect(try copied.nodeOffset(index) == original.nodeOffset(index))
                if original.isLeaf {
                    let a = try original.leaf(index), b = try copied.leaf(index)
                    #expect(Array(a.key) == Array(b.key) && a.flags == b.flags && a.valueLength == b.valueLength)
                }
            }
        }
        // Renumbering names the new page in the header as well.
        target.renumber(as: 77)
        #expect(target.number == 77)
        #expect(try target.page().number == 77)
    }
}
