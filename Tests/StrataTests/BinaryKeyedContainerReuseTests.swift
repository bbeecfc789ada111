import Foundation
@testable import Strata
import Synchronization
import Testing

// The decoder hands the same keyed container box out again for the next record of a key type
// (`BinaryKeyedContainerCache`), reads compact UUID/Date fields in place and builds strings in
// one copy. These tests pin that reuse never mixes up two records, two stored formats of one
// type, nested containers of one key type, or a container that escaped its `init(from:)`.

/// Stored as written by an older version: `a`, `b`, `c`.
private struct ShapeV1: Codable, Equatable {
    var a: Int
    var b: String
    var c: UUID
}

/// Stored by a newer version: `c` first, `b` removed, `d` and `e` added.
private struct ShapeV2: Codable, Equatable {
    var c: UUID
    var a: Int
    var d: Date
    var e: String
}

/// The reader of both formats: one key type meeting two stored layouts.
private struct ShapeReader: Codable, Equatable {
    var a: Int
    var b: String?
    var c: UUID
    var d: Date?
    var e: String?
}

/// Asks for its keys in the reverse of the stored order.
private struct Backwards: Codable, Equatable {
    var first: String
    var second: Int
    var third: UUID
    var fourth: Date

    private enum CodingKeys: String, CodingKey { case first, second, third, fourth }

    init(first: String, second: Int, third: UUID, fourth: Date) {
        self.first = first
        self.second = second
        self.third = third
        self.fourth = fourth
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        fourth = try container.decode(Date.self, forKey: .fourth)
        third = try container.decode(UUID.self, forKey: .third)
        second = try container.decode(Int.self, forKey: .second)
        first = try container.decode(String.self, forKey: .first)
    }
}

/// A recursive type: every level's container has the same key type and is alive while the
/// levels below it decode.
private final class TreeNode: Codable, Equatable {
    let label: String
    let children: [TreeNode]
    let next: TreeNode?

    enum CodingKeys: String, CodingKey { case label, children, next }

    init(label: String, children: [TreeNode] = [], next: TreeNode? = nil) {
        self.label = label
        self.children = children
        self.next = next
    }

    static func == (lhs: TreeNode, rhs: TreeNode) -> Bool {
        lhs.label == rhs.label && lhs.children == rhs.children && lhs.next == rhs.next
    }

    /// A chain `depth` long whose every link also has two leaf children.
    static func chain(depth: Int) -> TreeNode {
        var node: TreeNode?
        for level in (0..<depth).reversed() {
            node = TreeNode(label: "level \(level)", children: [TreeNode(label: "left \(level)"), TreeNode(label: "right \(level)")], next: node)
        }
        return node ?? TreeNode(label: "empty")
    }
}

/// Keeps the keyed container it was decoded with (misuse the decoder must survive).
private struct Escaping: Codable, Equatable {
    var value: String

    enum CodingKeys: String, CodingKey { case value }

    /// Only `anEscapedContainerIsNotHandedOutAgain` decodes this type.
    nonisolated(unsafe) static var kept: [KeyedDecodingContainer<CodingKeys>] = []

    init(value: String) { self.value = value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(String.self, forKey: .value)
        Self.kept.append(container)
    }
}

/// Optional special values and strings around the small-string limit (15 UTF-8 bytes).
private struct Optionals: Codable, Equatable {
    var id: UUID?
    var when: Date?
    var name: String?
    var nested: ShapeV1?
}

@Suite("Binary coder keyed container reuse")
struct BinaryKeyedContainerReuseTests {
    private let encoder = BinaryInstanceEncoder()
    private let decoder = BinaryInstanceDecoder()

    @Test func twoStoredFormatsOfOneTypeNeverMix() throws {
        var generator = makeCodingTestGenerator("two formats")
        var expected: [(bytes: [UInt8], reader: ShapeReader)] = []
        for n in 0..<50 {
            let id = UUID()
            if Bool.random(using: &generator) {
                let old = ShapeV1(a: n, b: "old \(n)", c: id)
                expected.append((try encoder.encode(old), ShapeReader(a: n, b: old.b, c: id, d: nil, e: nil)))
            } else {
                let new = ShapeV2(c: id, a: -n, d: Date(timeIntervalSince1970: Double(n)), e: String(repeating: "é", count: n % 20))
                expected.append((try encoder.encode(new), ShapeReader(a: -n, b: nil, c: id, d: new.d, e: new.e)))
            }
        }
        for _ in 0..<3 {
            for (bytes, reader) in expected.shuffled(using: &generator) {
                #expect(try decoder.decode(ShapeReader.self, from: bytes) == reader)
            }
        }
        // The strict older reader still reports the removed field of a newer record.
        let newer = try encoder.encode(ShapeV2(c: UUID(), a: 1, d: Date(), e: "x"))
        #expect(throws: DecodingError.self) { _ = try decoder.decode(ShapeV1.self, from: newer) }
    }

    @Test func keysAskedAgainstStoredOrder() throws {
        for n in 0..<20 {
            let value = Backwards(first: "first \(n)", second: n * 1000, third: UUID(), fourth: Date(timeIntervalSinceReferenceDate: Double(n) / 3))
            #expect(try decoder.decode(Backwards.self, from: encoder.encode(value)) == value)
        }
    }

    /// Deeper than `BinaryKeyedContainerCache.maximumEntries`, so past the cached boxes the
    /// decoder builds containers as before; every level must still read its own record.
    @Test func nestedContainersOfOneKeyType() throws {
        for depth in [1, 2, BinaryKeyedContainerCache.maximumEntries, BinaryKeyedContainerCache.maximumEntries + 10] {
            let tree = TreeNode.chain(depth: depth)
            #expect(try decoder.decode(TreeNode.self, from: encoder.encode(tree)) == tree)
        }
        let entries = BinaryKeyedContainerCache.entryCountOnThisThread
        #expect(entries <= BinaryKeyedContainerCache.maximumEntries)
        // One deep value does not take the whole cache (42 levels would otherwise fill all 32
        // entries): the thread's other key types keep room.
        let ofTreeNode = BinaryKeyedContainerCache.entryCountOnThisThread(for: TreeNode.CodingKeys.self)
        #expect(ofTreeNode <= BinaryKeyedContainerCache.maximumEntriesPerKey)
    }

    @Test func anEscapedContainerIsNotHandedOutAgain() throws {
        let first = try decoder.decode(Escaping.self, from: encoder.encode(Escaping(value: "first")))
        let before = BinaryKeyedContainerCache.entryCountOnThisThread
        let beforeOfKey = BinaryKeyedContainerCache.entryCountOnThisThread(for: Escaping.CodingKeys.self)
        let second = try decoder.decode(Escaping.self, from: encoder.encode(Escaping(value: "second")))
        #expect(first.value == "first")
        #expect(second.value == "second")
        // The first record's container is still referenced, so the second needed a new box
        // (unless the cache was already full).
        let kept = Escaping.kept.count
        #expect(kept >= 2)
        if before < BinaryKeyedContainerCache.maximumEntries,
           beforeOfKey < BinaryKeyedContainerCache.maximumEntriesPerKey {
            #expect(BinaryKeyedContainerCache.entryCountOnThisThread == before + 1)
        }
    }

    @Test func optionalFieldsAbsentOrPresent() throws {
        let cases = [
            Optionals(id: nil, when: nil, name: nil, nested: nil),
            Optionals(id: UUID(), when: nil, name: "", nested: nil),
            Optionals(id: nil, when: Date(timeIntervalSinceReferenceDate: -1.5), name: "fifteen bytes!!", nested: ShapeV1(a: 1, b: "b", c: UUID())),
            Optionals(id: UUID(), when: Date(), name: "sixteen bytes!!!", nested: ShapeV1(a: 2, b: "ünïcödé", c: UUID())),
        ]
        for value in cases + cases.reversed() {
            #expect(try decoder.decode(Optionals.self, from: encoder.encode(value)) == value)
        }
    }

    /// A record that fails half-way leaves no container behind that could leak into the next.
    @Test func failedDecodeLeavesReuseCorrect() throws {
        let good = ShapeV1(a: 7, b: "seven", c: UUID())
        let bytes = try encoder.encode(good)
        for cut in 1..<bytes.count {
            #expect(throws: DecodingError.self) { _ = try decoder.decode(ShapeV1.self, from: Array(bytes.prefix(cut))) }
            #expect(try decoder.decode(ShapeV1.self, from: bytes) == good)
        }
        // A wrong-size compact Date or UUID is reported, not misread.
        struct WrongDate: Codable { var d: Int64 }
        struct ReadsDate: Codable { var d: Date }
        struct ReadsUUID: Codable { var d: UUID }
        let wrong = try encoder.encode(WrongDate(d: 5))
        #expect(throws: DecodingError.self) { _ = try decoder.decode(ReadsDate.self, from: wrong) }
        #expect(throws: DecodingError.self) { _ = try decoder.decode(ReadsUUID.self, from: wrong) }
    }

    @Test func threadsDecodeConcurrently() async throws {
        let records = try (0..<200).map { n in
            let value = ShapeV2(c: UUID(), a: n, d: Date(timeIntervalSince1970: Double(n)), e: "record \(n)")
            return (try encoder.encode(value), value)
        }
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            let decoder = BinaryInstanceDecoder()
            for round in 0..<20 {
                for index in stride(from: (worker + round) % 7, to: records.count, by: 7) {
                    let decoded = try? decoder.decode(ShapeV2.self, from: records[index].0)
                    if decoded != records[index].1 { failures.withLock { $0 += 1 } }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }
}
