import Foundation
@testable import Strata
import Testing

/// The encoder hands a keyed container's box out again for later containers of the same key type
/// (`BinaryKeyedEncodingContainerCache`). A reused box must write exactly what a fresh one does,
/// nesting of one key type must never share a box, more key types than the cache holds must
/// still encode, and a container that escaped its `encode(to:)` must never write into a later
/// encode nor crash when used.
@Suite struct BinaryKeyedEncodingContainerReuseTests {
    private let encoder = BinaryInstanceEncoder()

    struct Pair: Codable, Equatable { var a: Int; var b: String }
    private static let pairBytes: [UInt8] = [2, 1, 0x61, 1, 3, 1, 0x62, 3, 2, 0x68, 0x69]

    /// A recursive type: every level opens a container of the same key type while its parent's
    /// container is still in use.
    indirect enum Tree: Codable, Equatable, Sendable {
        case leaf(Int)
        case node(Tree, Tree)
    }

    private func deepTree(_ depth: Int) -> Tree {
        depth == 0 ? .leaf(depth) : .node(deepTree(depth - 1), .leaf(depth))
    }

    @Test func reusedBoxesWriteWhatFreshOnesDo() throws {
        for _ in 0..<5 { #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes) }
        let tree = deepTree(12)   // deeper than `maximumEntriesPerKey`: the deep levels build their own
        let first = try encoder.encode(tree)
        for _ in 0..<3 {
            #expect(try encoder.encode(tree) == first)
            #expect(try BinaryInstanceDecoder().decode(Tree.self, from: first) == tree)
            #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
        }
    }

    /// Records, at the end of its `encode(to:)`, how many boxes its sink's cache holds.
    final class CountingEntries: Encodable {
        var entryCounts: [Int] = []
        var sinks: Set<ObjectIdentifier> = []
        enum Keys: String, CodingKey { case pair, tree }
        let tree: Tree
        init(tree: Tree) { self.tree = tree }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(Pair(a: -2, b: "hi"), forKey: .pair)
            try container.encode(tree, forKey: .tree)
            let sink = (encoder as! BinaryValueEncoder).sink
            sinks.insert(ObjectIdentifier(sink))
            entryCounts.append(sink.keyedContainers.entryCount)
        }
    }

    /// Encodes of the same shape on one thread reuse the boxes: the entries are made by the
    /// first encode and not added to later (with the cache off there would be none).
    @Test func boxesAreReusedAcrossEncodes() throws {
        let probe = CountingEntries(tree: deepTree(2))
        let first = try encoder.encode(probe)
        for _ in 0..<4 { #expect(try encoder.encode(probe) == first) }
        try #require(probe.sinks.count == 1, "one sink per thread, reused")
        // Keys, Pair.CodingKeys, and Tree's node and leaf keys (nested: more than one entry).
        #expect(probe.entryCounts.allSatisfy { $0 == probe.entryCounts[0] })
        #expect(probe.entryCounts[0] >= 4 && probe.entryCounts[0] <= BinaryKeyedEncodingContainerCache.maximumEntries)
        // A deeper tree than the cache nests: bounded, and reused too. (Not compared with the
        // counts above: the thread's sink may have cached deep trees for an earlier test.)
        let deep = CountingEntries(tree: deepTree(12))
        for _ in 0..<3 { _ = try encoder.encode(deep) }
        #expect(deep.entryCounts.allSatisfy { $0 == deep.entryCounts[0] })
        #expect(deep.entryCounts[0] >= probe.entryCounts[0] && deep.entryCounts[0] <= BinaryKeyedEncodingContainerCache.maximumEntries)
    }

    /// Twenty distinct key types in one value: more than the cache holds.
    @Test func moreKeyTypesThanTheCacheHolds() throws {
        struct Wide: Codable, Equatable {
            struct K0: Codable, Equatable { var v = 0 }; struct K1: Codable, Equatable { var w = 1 }
            struct K2: Codable, Equatable { var x = 2 }; struct K3: Codable, Equatable { var y = 3 }
            struct K4: Codable, Equatable { var z = 4 }; struct K5: Codable, Equatable { var a = 5 }
            struct K6: Codable, Equatable { var b = 6 }; struct K7: Codable, Equatable { var c = 7 }
            struct K8: Codable, Equatable { var d = 8 }; struct K9: Codable, Equatable { var e = 9 }
            struct L0: Codable, Equatable { var f = 10 }; struct L1: Codable, Equatable { var g = 11 }
            struct L2: Codable, Equatable { var h = 12 }; struct L3: Codable, Equatable { var i = 13 }
            struct L4: Codable, Equatable { var j = 14 }; struct L5: Codable, Equatable { var k = 15 }
            struct L6: Codable, Equatable { var l = 16 }; struct L7: Codable, Equatable { var m = 17 }
            struct L8: Codable, Equatable { var n = 18 }
            var k0 = K0(), k1 = K1(), k2 = K2(), k3 = K3(), k4 = K4(), k5 = K5(), k6 = K6(), k7 = K7(), k8 = K8(), k9 = K9()
            var l0 = L0(), l1 = L1(), l2 = L2(), l3 = L3(), l4 = L4(), l5 = L5(), l6 = L6(), l7 = L7(), l8 = L8()
        }
        let first = try encoder.encode(Wide())
        for _ in 0..<3 {
            #expect(try encoder.encode(Wide()) == first)
            #expect(try BinaryInstanceDecoder().decode(Wide.self, from: first) == Wide())
        }
    }

    /// Keeps its keyed container (API misuse) and writes through it after encoding finished.
    final class Escaping: Encodable {
        var kept: KeyedEncodingContainer<Keys>?
        enum Keys: String, CodingKey { case late }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .late)
            kept = container
        }
    }

    @Test func anEscapedContainerNeverWritesIntoALaterEncode() throws {
        for _ in 0..<3 {
            let escaping = Escaping()
            _ = try encoder.encode(escaping)
            var late = try #require(escaping.kept)
            // Containers of that key type in later encodes get other boxes; the escaped one writes
            // nothing into them and gets a typed error (its frame is closed).
            let bytes = try encoder.encode(Pair(a: -2, b: "hi"))
            #expect(throws: EncodingError.self) { try late.encode(99, forKey: .late) }
            #expect(bytes == Self.pairBytes)
            let again = try encoder.encode(Escaping())
            #expect(throws: EncodingError.self) { try late.encode(100, forKey: .late) }
            #expect(again == [1, 4] + Array("late".utf8) + [1, 2])
            #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
        }
    }

    /// Keeps its `Encoder` (API misuse); a keyed container requested from it after the encode
    /// must not be a cached box, whose sink reference is unretained: once the encoder is dropped
    /// the sink is freed, and a cached box would read freed memory.
    final class EscapingEncoder: Encodable {
        var saved: (any Encoder)?
        enum Keys: String, CodingKey { case a }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode(1, forKey: .a)
            saved = encoder
        }
    }

    @Test func aContainerFromAnEscapedEncoderOutlivesItsSinkSafely() throws {
        for _ in 0..<3 {
            let escaping = EscapingEncoder()
            _ = try encoder.encode(escaping)
            var late = try #require(escaping.saved).container(keyedBy: EscapingEncoder.Keys.self)
            escaping.saved = nil   // drops the last strong reference to the escaped sink
            #expect(throws: EncodingError.self) { try late.encode(1, forKey: .a) }
            var nested = late.nestedContainer(keyedBy: EscapingEncoder.Keys.self, forKey: .a)
            #expect(throws: EncodingError.self) { try nested.encode(2, forKey: .a) }
            #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
        }
    }

    /// Keeps its unkeyed container (API misuse), which holds the sink as the encoder does.
    final class EscapingUnkeyed: Encodable {
        var saved: (any UnkeyedEncodingContainer)?
        enum Keys: String, CodingKey { case a }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.unkeyedContainer()
            var element = container.nestedContainer(keyedBy: Keys.self)
            try element.encode(1, forKey: .a)
            saved = container
        }
    }

    @Test func aContainerFromAnEscapedUnkeyedContainerOutlivesItsSinkSafely() throws {
        for _ in 0..<3 {
            let escaping = EscapingUnkeyed()
            _ = try encoder.encode(escaping)
            // The escaped container is released when the closure returns: only `late` is left.
            var late = try { () throws -> KeyedEncodingContainer<EscapingUnkeyed.Keys> in
                var saved = try #require(escaping.saved)
                escaping.saved = nil
                return saved.nestedContainer(keyedBy: EscapingUnkeyed.Keys.self)
            }()
            #expect(throws: EncodingError.self) { try late.encode(1, forKey: .a) }
            #expect(throws: EncodingError.self) { try late.encode("x", forKey: .a) }
            #expect(try encoder.encode(Pair(a: -2, b: "hi")) == Self.pairBytes)
        }
    }

    /// Encodes from many threads at once: each thread's sink and boxes are its own.
    @Test func threadsEncodeIndependently() async throws {
        let tree = deepTree(6)
        let expected = try encoder.encode(tree)
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let encoder = BinaryInstanceEncoder()
                    for _ in 0..<200 where try encoder.encode(tree) != expected { return false }
                    return true
                }
            }
            for try await matched in group { #expect(matched) }
        }
    }
}
