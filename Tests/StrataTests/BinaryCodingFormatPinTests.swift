import Foundation
import Strata
import Testing

/// The binary instance format is on disk, so the encoder's bytes must never change by
/// accident (e.g. when its buffer handling is optimized). These values are encoded and
/// compared with digests recorded from the encoder at commit cafcf5b.
@Suite("Binary coder format pins")
struct BinaryCodingFormatPinTests {
    private let encoder = BinaryInstanceEncoder()

    /// Every container kind, sorted collections, compact forms, and slots and containers that
    /// need multi-byte varints (placeholders widened in place after their content was written).
    struct PinnedValue: Codable {
        var id: UUID
        var name: String
        var long: String
        var when: Date
        var blob: Data
        var negative: Int
        var huge: UInt128
        var small: Int128
        var nothing: Int?
        var something: Double?
        var flags: [Bool]
        var nested: [PinnedLeaf]
        var byName: [String: Int]
        var byNumber: [Int: String]
        var tags: Set<String>
        var matrix: [[Int]]
    }

    struct PinnedLeaf: Codable {
        var label: String
        var weight: Float
    }

    static func pinnedValue(scale: Int) -> PinnedValue {
        PinnedValue(
            id: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            name: "pinned ✓",
            long: String(repeating: "0123456789", count: 13 * scale),
            when: Date(timeIntervalSinceReferenceDate: -1234.5),
            blob: Data((0..<(200 * scale)).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
            negative: -300,
            huge: .max,
            small: -5,
            nothing: nil,
            something: 2.5,
            flags: (0..<(130 * scale)).map { $0 % 3 == 0 },
            nested: (0..<(20 * scale)).map { PinnedLeaf(label: "leaf \($0)", weight: Float($0) / 4) },
            byName: Dictionary(uniqueKeysWithValues: (0..<(150 * scale)).map { ("name\($0)", $0 * 1000) }),
            byNumber: Dictionary(uniqueKeysWithValues: (0..<(40 * scale)).map { ($0 * 37 - 500, "n\($0)") }),
            tags: Set((0..<(60 * scale)).map { "tag\($0)" }),
            matrix: (0..<(10 * scale)).map { row in (0..<row).map { $0 - row } })
    }

    /// FNV-1a, 64-bit: a stable digest of the encoded bytes.
    static func digest(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01B3 }
    }

    @Test func bytesMatchTheRecordedFormat() throws {
        let cases: [(scale: Int, count: Int, digest: UInt64)] = [
            (scale: 1, count: 3912, digest: 2_181_655_244_264_588_770),
            (scale: 4, count: 17014, digest: 2_552_464_426_892_427_426),
        ]
        for pin in cases {
            let bytes = try encoder.encode(Self.pinnedValue(scale: pin.scale))
            print("[pin] scale \(pin.scale) count \(bytes.count) digest \(Self.digest(bytes))")
            #expect(bytes.count == pin.count, "scale \(pin.scale)")
            #expect(Self.digest(bytes) == pin.digest, "scale \(pin.scale)")
        }
    }

    @Test func smallValuesHaveTheDocumentedBytes() throws {
        struct Pair: Codable { var a: Int; var b: String }
        // [2 fields] [1 "a"] [1 slot: zigzag(-2) = 3] [1 "b"] [3 slot: [2 "hi"]]
        #expect(try encoder.encode(Pair(a: -2, b: "hi")) == [2, 1, 0x61, 1, 3, 1, 0x62, 3, 2, 0x68, 0x69])
        // A 200-byte string: its slot length (2 + 200 = 202) and its own length (200) are
        // 2-byte varints.
        let long = String(repeating: "z", count: 200)
        let bytes = try encoder.encode(Pair(a: 0, b: long))
        #expect(Array(bytes.prefix(11)) == [2, 1, 0x61, 1, 0, 1, 0x62, 0xCA, 0x01, 0xC8, 0x01])
        #expect(bytes.count == 11 + 200 && bytes.dropFirst(11).allSatisfy { $0 == 0x7A })
    }
}
