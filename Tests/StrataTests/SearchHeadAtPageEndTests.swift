import Glibc
@testable import StrataCore
import StrataTestFixtures
import Testing

/// `SearchHead`, the first-word compare of a page's binary search, loads eight bytes of a key
/// that has them. Here both the searched key and the node key end exactly at a page followed by
/// a `PROT_NONE` page (`GuardedPageEnd`), for every length from 0 to 20 and a difference at
/// every position (or none): a load past either key's end crashes the test process, and every
/// answer must have the sign of memcmp order (a proper prefix first).
@Suite struct SearchHeadAtPageEndTests {
    private let searched = GuardedPageEnd()
    private let stored = GuardedPageEnd()

    private func sign(_ value: Int) -> Int { value < 0 ? -1 : value > 0 ? 1 : 0 }

    private func reference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let common = min(a.count, b.count)
        for index in 0..<common where a[index] != b[index] { return a[index] < b[index] ? -1 : 1 }
        return sign(a.count - b.count)
    }

    @Test func comparesWithinBothKeysInMemcmpOrder() {
        var random = SeededGenerator(seed: testSeed("search head at page end"))
        for _ in 0..<40 {
            let base = (0..<20).map { _ in UInt8.random(in: 0...255, using: &random) }
            for keyLength in 0...20 {
                for nodeLength in 0...20 {
                    let key = Array(base.prefix(keyLength))
                    var variants = [Array(base.prefix(nodeLength))]
                    for position in 0..<nodeLength {
                        var changed = variants[0]
                        changed[position] = changed[position] &+ UInt8.random(in: 1...255, using: &random)
                        variants.append(changed)
                    }
                    for node in variants {
                        let got = searched.withBytesEndingAtGuard(key) { keyBytes in
                            stored.withBytesEndingAtGuard(node) { nodeBytes in SearchHead(keyBytes).compare(nodeBytes, keyBytes) }
                        }
                        #expect(sign(got) == reference(node, key), "node \(node) key \(key)")
                    }
                }
            }
        }
    }
}
