import Foundation
import Strata
import Testing

/// The encoder reuses one sink per thread between encodes. A reused sink must behave exactly
/// like a fresh one: no bytes, frames or recorded errors of an earlier encode leak into a later
/// one, a nested encode never shares its caller's sink, and an encoder that escaped its
/// `encode(to:)` can never write into another encode's output.
@Suite("Binary coder sink reuse")
struct BinaryCodingSinkReuseTests {
    private let encoder = BinaryInstanceEncoder()

    struct Pair: Codable, Equatable { var a: Int; var b: String }
    private static let pairBytes: [UInt8] = [2, 1, 0x61, 1, 3, 1, 0x62, 3, 2, 0x68, 0x69]

    /// Requests a keyed container after writing a primitive: recorded as a deferred error.
    struct Misused: Encodable {
        func encode(to encoder: any Encoder) throws {
            var single = encoder.singleValueContainer()
            try single.encode(1)
            _ = encoder.container(keyedBy: BinaryCodingSinkReuseTests.AnyKey.self)
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    @Test func errorsAndLeftoversDoNotReachTheNextEncode() throws {
        for _ in 0..<3 {
            #expect(throws: EncodingError.self) { _ = try encoder.encode(Misused()) }
            #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
            // A large value grows the sink's buffer; the next small one must not see its bytes.
            _ = try encoder.encode([String](repeating: String(repeating: "x", count: 1000), count: 100))
            #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
            // An encode that throws half-way leaves frames open.
            #expect(throws: Failing.Failure.self) { _ = try encoder.encode(Failing()) }
            #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
        }
    }

    struct Failing: Encodable {
        struct Failure: Error {}
        enum Keys: String, CodingKey { case a }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            var nested = container.nestedUnkeyedContainer(forKey: .a)
            try nested.encode("partial")
            throw Failure()
        }
    }

    /// Encodes another value with a fresh `BinaryInstanceEncoder` from inside `encode(to:)`.
    struct Nesting: Encodable {
        enum Keys: String, CodingKey { case inner, after }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            let inner = try BinaryInstanceEncoder().encode(Pair(a: -2, b: "hi"))
            try container.encode(inner, forKey: .inner)
            try container.encode(7, forKey: .after)
        }
    }

    @Test func nestedEncodesUseTheirOwnSink() throws {
        let bytes = try encoder.encode(Nesting())
        let expectedInner = try encoder.encode(Self.pairBytes)
        var expected: [UInt8] = [2, 5] + Array("inner".utf8) + [UInt8(expectedInner.count)] + expectedInner
        expected += [5] + Array("after".utf8) + [1, 14]
        #expect(bytes == expected)
        #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
    }

    /// Keeps its encoder (API misuse) and writes through it after encoding finished.
    final class Escaping: Encodable {
        var kept: (any Encoder)?
        enum Keys: String, CodingKey { case late }
        func encode(to encoder: any Encoder) throws {
            kept = encoder
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .late)
        }
    }

    @Test func anEscapedEncoderNeverWritesIntoALaterEncode() throws {
        let escaping = Escaping()
        _ = try encoder.encode(escaping)
        let kept = try #require(escaping.kept)
        // The sink behind `kept` is still referenced, so it was not reused: this encode gets
        // another one, and writing through `kept` afterwards cannot touch its bytes.
        let bytes = try encoder.encode(Pair(a: -2, b: "hi"))
        var late = kept.container(keyedBy: Escaping.Keys.self)
        try? late.encode(99, forKey: .late)
        #expect(bytes == Self.pairBytes)
        #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
    }
}
