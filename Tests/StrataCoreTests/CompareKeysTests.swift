import Glibc
import Testing
import StrataTestFixtures
@testable import StrataCore

/// `compareKeys`, the one key order of every tree: word by word over the first
/// `wordComparedPrefix` bytes, then memcmp, then the shorter key first. It must agree with
/// memcmp order (a proper prefix first) for every pair, whatever the lengths and wherever the
/// first difference lies: before, inside or after the word-compared prefix, in the byte tail.
@Suite struct CompareKeysTests {
    /// The order by definition: memcmp over the common length, then the length.
    private func reference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        let common = min(a.count, b.count)
        let result = common == 0 ? 0 : a.withUnsafeBytes { x in b.withUnsafeBytes { y in Int(memcmp(x.baseAddress!, y.baseAddress!, common)) } }
        return result != 0 ? result : a.count - b.count
    }

    private func sign(_ value: Int) -> Int { value < 0 ? -1 : value > 0 ? 1 : 0 }

    /// Random pairs sharing a random prefix, differing (or not) at a random byte, lengths from 0
    /// to past `wordComparedPrefix`, bytes that differ in their high bit too (signedness).
    @Test func agreesWithMemcmpOrder() {
        var random = SeededGenerator(seed: testSeed("compareKeys"))
        let byte = { (random: inout SeededGenerator) -> UInt8 in
            Bool.random(using: &random) ? UInt8.random(in: 0...255, using: &random) : [0x00, 0x30, 0x7F, 0x80, 0xFF].randomElement(using: &random)!
        }
        for _ in 0..<20_000 {
            let shared = Int.random(in: 0...(wordComparedPrefix + 24), using: &random)
            let prefix = (0..<shared).map { _ in byte(&random) }
            var a = prefix + (0..<Int.random(in: 0...12, using: &random)).map { _ in byte(&random) }
            var b = prefix + (0..<Int.random(in: 0...12, using: &random)).map { _ in byte(&random) }
            if Int.random(in: 0..<4, using: &random) == 0 { b = a }
            if Int.random(in: 0..<4, using: &random) == 0, !a.isEmpty { b = Array(a[0..<Int.random(in: 0..<a.count, using: &random)]) }
            if Int.random(in: 0..<8, using: &random) == 0 { swap(&a, &b) }
            let got = a.withUnsafeBytes { x in b.withUnsafeBytes { y in compareKeys(x, y) } }
            #expect(sign(got) == sign(reference(a, b)), "\(a) vs \(b)")
        }
    }

    /// The boundaries by hand: a difference in the last byte of each word, right after the
    /// word-compared prefix, in a tail shorter than a word, and prefixes of every length.
    @Test func boundaries() {
        for length in [1, 7, 8, 9, 15, 16, 17, wordComparedPrefix - 1, wordComparedPrefix, wordComparedPrefix + 1,
                       wordComparedPrefix + 7, wordComparedPrefix + 8, wordComparedPrefix + 30] {
            let base = [UInt8](repeating: 0x30, count: length)
            for position in 0..<length {
                var higher = base
                higher[position] = 0xB1
                let lower = base
                #expect(lower.withUnsafeBytes { x in higher.withUnsafeBytes { y in compareKeys(x, y) } } < 0, "length \(length), byte \(position)")
                #expect(higher.withUnsafeBytes { x in lower.withUnsafeBytes { y in compareKeys(x, y) } } > 0, "length \(length), byte \(position)")
            }
            #expect(base.withUnsafeBytes { x in base.withUnsafeBytes { y in compareKeys(x, y) } } == 0)
            let shorter = Array(base.dropLast())
            #expect(shorter.withUnsafeBytes { x in base.withUnsafeBytes { y in compareKeys(x, y) } } < 0, "prefix of length \(length - 1)")
        }
        // Within one word the first differing byte decides, whatever the bytes after it: a
        // little-endian or signed word compare gets these wrong.
        for length in [8, 16, wordComparedPrefix] {
            for position in stride(from: 0, to: length, by: 8) {
                var lower = [UInt8](repeating: 0x30, count: length), higher = lower
                lower[position] = 0x01
                higher[position] = 0x02
                for later in position + 1..<min(length, position + 8) { lower[later] = 0xFF; higher[later] = 0x00 }
                #expect(lower.withUnsafeBytes { x in higher.withUnsafeBytes { y in compareKeys(x, y) } } < 0, "length \(length), word at \(position)")
                lower[position] = 0x7F
                higher[position] = 0x80 // the high bit: unsigned, not signed
                #expect(lower.withUnsafeBytes { x in higher.withUnsafeBytes { y in compareKeys(x, y) } } < 0, "length \(length), high bit at \(position)")
            }
        }
        let empty: [UInt8] = []
        #expect(empty.withUnsafeBytes { x in [UInt8(0)].withUnsafeBytes { y in compareKeys(x, y) } } < 0)
        #expect(empty.withUnsafeBytes { x in empty.withUnsafeBytes { y in compareKeys(x, y) } } == 0)
    }
}
