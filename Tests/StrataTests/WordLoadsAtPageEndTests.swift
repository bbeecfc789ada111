import Foundation
@testable import Strata
import StrataTestFixtures
import Testing

// The envelope prefix, a stored key header and a keyed field are compared by word loads
// (`EnvelopePrefixMatcher`, `BinaryShortPrefix`, `BinaryKeyedFieldScanner.nextValue(ifKeyHeaderIs:)`).
// A load past the bytes of a heap array never faults, so these place the bytes so that they end
// exactly at a page followed by a `PROT_NONE` page (`GuardedPageEnd`): a load of even one byte
// too many crashes the test process, and every answer must still equal a byte compare's.

/// Keys of 0 to 16 UTF-8 bytes: stored headers `[key length][key]` of 1 to 17 bytes (17, from the
/// 16-byte key, is the first that cannot be word-compared). Keys share beginnings on purpose.
private struct KeyOfEveryLength: Codable, Equatable {
    var k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12, k13, k14, k15, k16: String?

    enum CodingKeys: String, CodingKey {
        case k0 = "", k1 = "a", k2 = "ab", k3 = "abc", k4 = "abcd", k5 = "abcde", k6 = "abcdef"
        case k7 = "abcdefg", k8 = "abcdefgh", k9 = "abcdefghi", k10 = "abcdefghij", k11 = "abcdefghijk"
        case k12 = "abcdefghijkl", k13 = "abcdefghijklm", k14 = "abcdefghijklmn", k15 = "abcdefghijklmno"
        case k16 = "abcdefghijklmnop"
    }

    /// The fields in key-length order.
    static var keyPaths: [WritableKeyPath<KeyOfEveryLength, String?>] {
        [\.k0, \.k1, \.k2, \.k3, \.k4, \.k5, \.k6, \.k7, \.k8, \.k9, \.k10, \.k11, \.k12, \.k13, \.k14, \.k15, \.k16]
    }
}

@Suite("Word loads at a page end")
struct WordLoadsAtPageEndTests {
    private let page = GuardedPageEnd()

    @Test func aShortPrefixReadsOnlyItsBytesOrEightAtAPageEnd() {
        var generator = makeCodingTestGenerator("short prefix at page end")
        for count in 1...16 {
            let string = generator.bytes(count: count)
            let prefix = BinaryShortPrefix(string)
            #expect(prefix.isComparable)
            // `matches(at:)` may read max(count, 8) bytes: exactly those, ending at the guard.
            let bytes = string + generator.bytes(count: max(0, 8 - count))
            #expect(page.withBytesEndingAtGuard(bytes) { prefix.matches(at: $0.baseAddress!) })
            for position in 0..<count {
                var changed = bytes
                changed[position] ^= UInt8.random(in: 1...255, using: &generator)
                #expect(!page.withBytesEndingAtGuard(changed) { prefix.matches(at: $0.baseAddress!) })
            }
        }
        #expect(!BinaryShortPrefix(generator.bytes(count: 17)).isComparable)
    }

    @Test func anEnvelopeEndingAtAPageEndIsMatchedWithinItsBytes() {
        var generator = makeCodingTestGenerator("envelope prefix at page end")
        for prefixCount in 1...17 {
            let prefix = generator.bytes(count: prefixCount)
            let matcher = EnvelopePrefixMatcher(prefix)
            let full = prefix + generator.bytes(count: 20)
            for length in 0...20 {
                let envelope = Array(full.prefix(length))
                let expected = envelope.starts(with: prefix) ? Array(envelope.dropFirst(prefixCount)) : nil
                #expect(page.withBytesEndingAtGuard(envelope) { matcher.payload(of: $0).map(Array.init) } == expected)
                for position in 0..<min(prefixCount, length) {
                    var changed = envelope
                    changed[position] ^= UInt8.random(in: 1...255, using: &generator)
                    #expect(page.withBytesEndingAtGuard(changed) { matcher.payload(of: $0).map(Array.init) } == nil)
                }
            }
        }
    }

    @Test func aFieldEndingTheRecordAtAPageEndDecodesForEveryHeaderLength() throws {
        let encoder = BinaryInstanceEncoder(), decoder = BinaryInstanceDecoder()
        for keyLength in 0...16 {
            for valueLength in 0...9 {
                let value = String(repeating: "v", count: valueLength)
                // The field alone (the keys before it are asked first and do not match), and after
                // all the shorter keys (each found in stored order by its header).
                var alone = KeyOfEveryLength(), afterShorter = KeyOfEveryLength()
                alone[keyPath: KeyOfEveryLength.keyPaths[keyLength]] = value
                for shorter in 0..<keyLength { afterShorter[keyPath: KeyOfEveryLength.keyPaths[shorter]] = "\(shorter)" }
                afterShorter[keyPath: KeyOfEveryLength.keyPaths[keyLength]] = value
                for instance in [alone, afterShorter] {
                    let bytes = try encoder.encode(instance)
                    // Twice: the first decode on this thread may learn the key names; later ones
                    // take the header compare.
                    for _ in 0..<2 {
                        #expect(try page.withBytesEndingAtGuard(bytes) { try decoder.decode(KeyOfEveryLength.self, from: $0) } == instance)
                    }
                    // Cut short, it is damage, found within the bytes.
                    #expect(throws: DecodingError.self) {
                        try page.withBytesEndingAtGuard(Array(bytes.dropLast())) { try decoder.decode(KeyOfEveryLength.self, from: $0) }
                    }
                }
            }
        }
    }
}
