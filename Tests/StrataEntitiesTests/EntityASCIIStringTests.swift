import Foundation
import Strata
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The ASCII fast path of string decoding (`EntityASCIIString`) never answers differently from
/// the general decoder: it either declines or returns exactly what that decoder returns.
@Suite struct EntityASCIIStringTests {
    /// The general decoder's answer for a whole ordered encoding (nil when it throws).
    static func general(_ bytes: [UInt8]) -> String? {
        var reader = OrderedKeyReader(bytes)
        guard let string = try? reader.read(String.self), reader.isAtEnd else { return nil }
        return string
    }

    @Test func agreesWithTheGeneralDecoderOnStoredStrings() {
        let seed = testSeed("asciiAgreesWithGeneralDecoder")
        var random = SeededGenerator(seed: seed)
        // Plain ASCII, a zero byte (escaped), non-ASCII (precomposed and decomposed), the
        // highest ASCII byte and every length around the eight-byte steps.
        let alphabet: [String] = ["a", "Z", "0", " ", "~", "\u{7F}", "\u{01}", "\u{00}", "é", "e\u{0301}", "日", "🙂"]
        var fastAnswers = 0
        for _ in 0..<4000 {
            let length = Int(random.next() % 20)
            let asciiOnly = random.next() % 2 == 0
            let string = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(asciiOnly ? 7 : alphabet.count))] }.joined()
            var writer = OrderedKeyWriter()
            writer.write(string)
            let bytes = writer.bytes
            let fast = bytes.withUnsafeBytes { EntityASCIIString.decode(wholeEncoding: $0) }
            if let fast {
                fastAnswers += 1
                #expect(fast == Self.general(bytes), "[asciiAgreesWithGeneralDecoder] seed \(seed): \(bytes)")
                #expect(fast == string)
            }
            // Where the general decoder needs work the fast path must decline.
            if string.utf8.contains(where: { $0 == 0 || $0 >= 0x80 }) { #expect(fast == nil, "seed \(seed): \(bytes)") }
        }
        #expect(fastAnswers > 1000)
    }

    @Test func declinesDamagedAndForeignBytes() {
        let seed = testSeed("asciiDeclinesDamagedBytes")
        var random = SeededGenerator(seed: seed)
        for _ in 0..<4000 {
            let bytes = (0..<Int(random.next() % 24)).map { _ in UInt8(truncatingIfNeeded: random.next() % 4 == 0 ? random.next() % 3 : random.next()) }
            let fast = bytes.withUnsafeBytes { EntityASCIIString.decode(wholeEncoding: $0) }
            // Whatever the fast path accepts, the general decoder accepts with the same string.
            if let fast { #expect(fast == Self.general(bytes), "[asciiDeclinesDamagedBytes] seed \(seed): \(bytes)") }
        }
        // Truncated, missing terminator, escaped zero, a byte above ASCII.
        for bytes: [UInt8] in [[], [0], [0x61, 0], [0x61, 0x62], [0x61, 0, 0xFF, 0, 0], [0x61, 0x80, 0, 0], [0x61, 0, 1, 0, 0]] {
            #expect(bytes.withUnsafeBytes { EntityASCIIString.decode(wholeEncoding: $0) } == nil, "\(bytes)")
        }
        #expect(([0, 0] as [UInt8]).withUnsafeBytes { EntityASCIIString.decode(wholeEncoding: $0) } == "")
    }

    @Test func plainASCIICheckMatchesAByteByByteCheck() {
        let seed = testSeed("plainASCIICheck")
        var random = SeededGenerator(seed: seed)
        for _ in 0..<4000 {
            var bytes = (0..<Int(random.next() % 40)).map { _ in UInt8(1 + random.next() % 0x7F) }
            // Put one zero or high byte anywhere (sometimes none), at every offset in a word.
            if !bytes.isEmpty, random.next() % 3 != 0 {
                bytes[Int(random.next() % UInt64(bytes.count))] = random.next() % 2 == 0 ? 0 : UInt8(0x80 + random.next() % 0x80)
            }
            let expected = bytes.allSatisfy { $0 != 0 && $0 < 0x80 }
            #expect(bytes.withUnsafeBytes { EntityASCIIString.isPlainASCII($0) } == expected, "[plainASCIICheck] seed \(seed): \(bytes)")
        }
    }
}
