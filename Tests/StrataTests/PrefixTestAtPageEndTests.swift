import Glibc
@testable import StrataCore
import StrataTestFixtures
import Testing

/// `Transaction.hasPrefix`, the test of each entry of `forEachEntry(withPrefix:)`, compares a
/// word at a time and ends with a word that overlaps the one before it. Here the key and the
/// prefix both end exactly at a page followed by a `PROT_NONE` page (`GuardedPageEnd`), for
/// every pair of lengths from 0 to 28 and a difference at every position (or none): a load past
/// either end crashes the test process, and every answer must be the byte-by-byte one.
@Suite struct PrefixTestAtPageEndTests {
    private let keys = GuardedPageEnd()
    private let prefixes = GuardedPageEnd()

    @Test func agreesWithAByteByByteTest() {
        var random = SeededGenerator(seed: testSeed("prefix test at page end"))
        for _ in 0..<10 {
            let base = (0..<28).map { _ in UInt8.random(in: 0...255, using: &random) }
            for keyLength in 0...28 {
                for prefixLength in 0...28 {
                    let key = Array(base.prefix(keyLength))
                    var variants = [Array(base.prefix(prefixLength))]
                    for position in 0..<prefixLength {
                        var changed = variants[0]
                        changed[position] = changed[position] &+ UInt8.random(in: 1...255, using: &random)
                        variants.append(changed)
                    }
                    for prefix in variants {
                        let expected = key.count >= prefix.count && Array(key.prefix(prefix.count)) == prefix
                        let got = keys.withBytesEndingAtGuard(key) { keyBytes in
                            prefixes.withBytesEndingAtGuard(prefix) { prefixBytes in Transaction.hasPrefix(keyBytes, prefixBytes) }
                        }
                        #expect(got == expected, "key \(key) prefix \(prefix)")
                    }
                }
            }
        }
    }
}
