import Foundation
import Strata
import Testing

@Suite("Binary coder corrupt input")
struct BinaryCodingCorruptionTests {
    private let encoder = BinaryInstanceEncoder()
    private let decoder = BinaryInstanceDecoder()

    private func isDataCorrupted(_ error: any Error) -> Bool {
        if case DecodingError.dataCorrupted = error { return true }
        return false
    }

    @Test func everyTruncationIsDataCorrupted() throws {
        let bytes = try encoder.encode(ModelLibrary.sample())
        var failures: [String] = []
        for length in 1..<bytes.count {
            do {
                _ = try decoder.decode(ModelLibrary.self, from: Array(bytes.prefix(length)))
                failures.append("prefix \(length) decoded")
            } catch {
                if !isDataCorrupted(error) { failures.append("prefix \(length): \(error)") }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(bytes.count): \(failures.prefix(3))")
        #expect(throws: DecodingError.self) { _ = try decoder.decode(ModelLibrary.self, from: []) }
    }

    @Test func randomTruncationsOfManyShapesNeverCrash() throws {
        var generator = makeCodingTestGenerator("binary truncations")
        let samples: [[UInt8]] = [
            try encoder.encode([ModelLibrary.sample(), ModelLibrary.sample()]),
            try encoder.encode(["a": [1, 2], "b": []]),
            try encoder.encode([ModelEvent.opened, .renamed(from: "x", to: "y")]),
        ]
        for _ in 0..<300 {
            let sample = samples.randomElement(using: &generator)!
            let prefix = Array(sample.prefix(Int.random(in: 0..<sample.count, using: &generator)))
            #expect(throws: DecodingError.self) {
                _ = try decoder.decode([ModelLibrary].self, from: prefix)
                _ = try decoder.decode([String: [Int]].self, from: prefix)
                _ = try decoder.decode([ModelEvent].self, from: prefix)
            }
        }
    }

    @Test func randomByteFlipsNeverCrash() throws {
        var generator = makeCodingTestGenerator("binary byte flips")
        let original = try encoder.encode(ModelLibrary.sample())
        var outcomes = (decoded: 0, threw: 0)
        var unexpected: [String] = []
        for _ in 0..<3000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = Bool.random(using: &generator) ? UInt8.random(in: 0...255, using: &generator) : bytes[index] ^ 0x80
            }
            do {
                _ = try decoder.decode(ModelLibrary.self, from: bytes)
                outcomes.decoded += 1
            } catch is DecodingError {
                outcomes.threw += 1
            } catch {
                unexpected.append("\(error)")
            }
        }
        print("[binary byte flips] decoded \(outcomes.decoded), rejected \(outcomes.threw)")
        #expect(unexpected.isEmpty, "\(unexpected.prefix(3))")
    }

    @Test func randomGarbageNeverCrashes() {
        var generator = makeCodingTestGenerator("binary garbage")
        for _ in 0..<2000 {
            let bytes = generator.bytes(count: Int.random(in: 0...64, using: &generator))
            _ = try? decoder.decode(ModelLibrary.self, from: bytes)
            _ = try? decoder.decode([String: [Int?]].self, from: bytes)
            _ = try? decoder.decode([ModelEvent].self, from: bytes)
            _ = try? decoder.decode(Set<UUID>.self, from: bytes)
        }
    }

    @Test func forgedLengthsAreRejectedWithoutAllocating() {
        // One keyed field "a" whose value claims ~34 GB.
        let hugeValue: [UInt8] = [1, 1, 0x61, 0x80, 0x80, 0x80, 0x80, 0x7F, 0x00]
        // An unkeyed container claiming 2^62 elements.
        let hugeCount: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]
        // A string claiming more bytes than present.
        let longString: [UInt8] = [0xFF, 0xFF, 0x03, 0x61]
        // A varint that never ends / overflows.
        let endlessVarint: [UInt8] = Array(repeating: 0xFF, count: 11)
        struct One: Codable { var a: String }
        for (bytes, decode) in [
            (hugeValue, { (b: [UInt8]) in _ = try decoder.decode(One.self, from: b) }),
            (hugeCount, { (b: [UInt8]) in _ = try decoder.decode([Int].self, from: b) }),
            (longString, { (b: [UInt8]) in _ = try decoder.decode(String.self, from: b) }),
            (endlessVarint, { (b: [UInt8]) in _ = try decoder.decode(Int.self, from: b) }),
        ] {
            do {
                try decode(bytes)
                Issue.record("\(bytes) decoded")
            } catch {
                #expect(isDataCorrupted(error), "\(error)")
            }
        }
    }

    /// A recursive type: forged (or merely very deep) input must not recurse without bound.
    final class Chain: Codable {
        var next: Chain?
        init(next: Chain?) { self.next = next }

        static func depth(_ levels: Int) -> Chain {
            var chain = Chain(next: nil)
            for _ in 1..<levels { chain = Chain(next: chain) }
            return chain
        }

        var length: Int {
            var count = 1
            var current = self
            while let next = current.next { count += 1; current = next }
            return count
        }
    }

    @Test func nestingIsBounded() throws {
        #expect(try decoder.decode(Chain.self, from: encoder.encode(Chain.depth(200))).length == 200)
        let tooDeep = try encoder.encode(Chain.depth(1000))
        do {
            _ = try decoder.decode(Chain.self, from: tooDeep)
            Issue.record("expected the nesting limit to apply")
        } catch {
            #expect(isDataCorrupted(error), "\(error)")
        }
    }

    @Test func corruptPrimitivesAreDescribed() {
        let cases: [([UInt8], String)] = [
            ([2], "Bool"),  // not 0/1
            ([1, 0xC3], "String"),  // invalid UTF-8
            ([1, 2, 3], "Double"),  // wrong width
            ([0x80, 0x02], "Int8"),  // 256 does not fit
            (Array(repeating: 0xFF, count: 18) + [0x04], "Int128"),  // overflows 128 bits
        ]
        for (bytes, what) in cases {
            do {
                switch what {
                case "Bool": _ = try decoder.decode(Bool.self, from: bytes)
                case "String": _ = try decoder.decode(String.self, from: bytes)
                case "Double": _ = try decoder.decode(Double.self, from: bytes)
                case "Int128": _ = try decoder.decode(Int128.self, from: bytes)
                default: _ = try decoder.decode(Int8.self, from: bytes)
                }
                Issue.record("\(what) \(bytes) decoded")
            } catch DecodingError.dataCorrupted(let context) {
                #expect(context.debugDescription.contains("Corrupt binary instance"), "\(context.debugDescription)")
            } catch {
                Issue.record("\(what): unexpected \(error)")
            }
        }
    }
}
