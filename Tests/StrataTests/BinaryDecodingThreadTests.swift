import Foundation
@testable import Strata
import Testing

// The decoder takes its state from the thread (`BinaryDecodingThread`) and hands keyed
// containers out through per-entry vendors (`BinaryKeyedContainerCache`). These tests pin that a
// decode nested in another on the same thread gets its own state, that a failed decode leaves
// the pooled state clean for the next one, and that stack-lent key bytes equal `orderedKeyBytes`.

private struct Inner: Codable, Equatable {
    var name: String
    var count: Int
}

/// Decodes a second binary value from inside its own `init(from:)`, on the same thread, while
/// the outer decode's state and container are in use.
private struct Outer: Codable, Equatable {
    var label: String
    var inner: Inner
    var after: Int

    enum CodingKeys: String, CodingKey { case label, innerBytes, after }

    init(label: String, inner: Inner, after: Int) {
        self.label = label
        self.inner = inner
        self.after = after
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        label = try container.decode(String.self, forKey: .label)
        let bytes = try container.decode([UInt8].self, forKey: .innerBytes)
        inner = try BinaryInstanceDecoder().decode(Inner.self, from: bytes)
        after = try container.decode(Int.self, forKey: .after)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(label, forKey: .label)
        try container.encode(try BinaryInstanceEncoder().encode(inner), forKey: .innerBytes)
        try container.encode(after, forKey: .after)
    }
}

/// Nested keyed values, so a decode appends path nodes (which the pooled state must drop).
private struct Deep: Codable, Equatable {
    var inner: Inner
    var list: [Inner]
}

@Suite("Binary decoder per-thread state")
struct BinaryDecodingThreadTests {
    private let encoder = BinaryInstanceEncoder()
    private let decoder = BinaryInstanceDecoder()

    @Test func aDecodeNestedOnTheSameThreadGetsItsOwnState() throws {
        for n in 0..<10 {
            let value = Outer(label: "outer \(n)", inner: Inner(name: "inner \(n)", count: n * 300), after: -n)
            #expect(try decoder.decode(Outer.self, from: encoder.encode(value)) == value)
        }
    }

    @Test func failedDecodesLeaveThePooledStateClean() throws {
        var generator = makeCodingTestGenerator("pooled state")
        let good = Deep(inner: Inner(name: "a", count: 1), list: [Inner(name: "b", count: 200), Inner(name: "c", count: 3)])
        let bytes = try encoder.encode(good)
        for _ in 0..<200 {
            var damaged = bytes
            let index = Int.random(in: 0..<damaged.count, using: &generator)
            damaged[index] ^= UInt8.random(in: 1...255, using: &generator)
            // Any outcome but a crash is fine for the damaged bytes; the next decode must be exact.
            _ = try? decoder.decode(Deep.self, from: damaged)
            _ = try? decoder.decode(Deep.self, from: Array(bytes.prefix(index)))
            #expect(try decoder.decode(Deep.self, from: bytes) == good)
        }
        // A path reported after reuse names this decode's keys, not a previous one's.
        struct ReadsDeep: Codable { var inner: Inner; var list: [ReadsCount] }
        struct ReadsCount: Codable { var name: String; var count: String }
        #expect {
            _ = try decoder.decode(ReadsDeep.self, from: bytes)
        } throws: { error in
            guard case DecodingError.typeMismatch(_, let context) = error else {
                guard case DecodingError.dataCorrupted(let context) = error else { return false }
                return context.codingPath.map(\.stringValue) == ["list", "Index 0", "count"]
            }
            return context.codingPath.map(\.stringValue) == ["list", "Index 0", "count"]
        }
    }

    @Test func stackLentKeyBytesEqualOrderedKeyBytes() {
        var generator = makeCodingTestGenerator("stack key bytes")
        func check<K: OrderedKey>(_ value: K) {
            var lent: [UInt8] = []
            value.withOrderedKeyBytes { lent = Array($0) }
            #expect(lent == value.orderedKeyBytes, "\(K.self) \(value)")
        }
        for _ in 0..<100 {
            let bits = generator.next()
            check(UInt8(truncatingIfNeeded: bits)); check(UInt16(truncatingIfNeeded: bits))
            check(UInt32(truncatingIfNeeded: bits)); check(bits); check(UInt(truncatingIfNeeded: bits))
            check(Int8(truncatingIfNeeded: bits)); check(Int16(truncatingIfNeeded: bits))
            check(Int32(truncatingIfNeeded: bits)); check(Int64(bitPattern: bits)); check(Int(truncatingIfNeeded: bits))
            check(UUID())
            check("key \(bits)")  // the default: through orderedKeyBytes
        }
        for edge in [Int.min, -1, 0, 1, Int.max] { check(edge) }
    }
}
