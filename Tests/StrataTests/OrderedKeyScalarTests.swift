import Foundation
import Strata
import Testing

enum KeyTestGenre: String, CaseIterable {
    // Declared out of raw-value order on purpose: the key order is raw-value order.
    case rock, jazz, ambient, blues, zydeco
}

extension KeyTestGenre: OrderedKey, Comparable {}

enum KeyTestLevel: Int {
    case low = -5, high = 10, middle = 0
}

extension KeyTestLevel: OrderedKey, Comparable {}

@Suite("OrderedKey Bool, bytes, UUID, Date, Optional, enums")
struct OrderedKeyScalarTests {
    @Test func bool() throws {
        expectOrderPreserved([false, true, true, false], compare: { comparableSign($0 ? 1 : 0, $1 ? 1 : 0) })
        #expect(!(Bool.self is any Comparable.Type), "no retroactive conformance")
        #expect(throws: OrderedKeyError.self) { _ = try Bool(orderedKeyBytes: [2]) }
        #expect(throws: OrderedKeyError.self) { _ = try Bool(orderedKeyBytes: []) }
    }

    @Test func bytes() {
        var generator = makeCodingTestGenerator("OrderedBytes")
        var values: [OrderedBytes] = [[], [0], [0, 0], [0, 0xFF], [0xFF], [0xFF, 0], [0xFF, 0xFF], [1], [1, 0], [0, 1]]
        values += (0..<200).map { _ in
            // Bias towards 0x00 and 0xFF, the bytes the escaping treats specially.
            OrderedBytes((0..<Int.random(in: 0...5, using: &generator)).map { _ in [0, 0xFF, 1, 0xFE].randomElement(using: &generator)! })
        }
        expectOrderPreserved(values)
        expectTruncationsThrow(OrderedBytes([0, 1, 0xFF]), as: OrderedBytes.self)
        #expect(OrderedBytes(Data([1, 2])).data == Data([1, 2]))
    }

    @Test func uuidByteOrderMatchesComparable() {
        var generator = makeCodingTestGenerator("UUID")
        var values = (0..<150).map { _ in
            UUID(uuid: (UInt8.random(in: 0...255, using: &generator), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                        UInt8.random(in: 0...255, using: &generator)))
        }
        values += (0..<100).map { _ in
            let bytes = generator.bytes(count: 16)
            return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                               bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
        }
        values.append(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        values.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        expectOrderPreserved(values)
        expectTruncationsThrow(UUID(), as: UUID.self)
    }

    @Test func dates() {
        var generator = makeCodingTestGenerator("Date")
        var values: [Date] = [
            .distantPast, .distantFuture, Date(timeIntervalSince1970: -1e10), Date(timeIntervalSince1970: -1),
            Date(timeIntervalSince1970: 0), Date(timeIntervalSinceReferenceDate: -0.001), Date(timeIntervalSinceReferenceDate: 0),
            Date(timeIntervalSinceReferenceDate: 0.001), Date(timeIntervalSinceReferenceDate: 1e-9), Date(),
        ]
        values += (0..<200).map { _ in Date(timeIntervalSince1970: Double.random(in: -1e11...1e11, using: &generator)) }
        expectOrderPreserved(values)
        expectTruncationsThrow(Date(), as: Date.self)
    }

    @Test func optionals() {
        var generator = makeCodingTestGenerator("Optional")
        var ints: [Int?] = [nil, .min, -1, 0, 1, .max, nil]
        ints += (0..<100).map { _ in Bool.random(using: &generator) ? nil : Int.random(in: -1000...1000, using: &generator) }
        expectOrderPreserved(ints, compare: optionalSign)
        expectOrderPreserved([nil, "", "\0", "a", "ab", "b"] as [String?], compare: optionalSign)
        // nil, then .some(nil), then the values: rank them.
        let rank = { (value: Bool??) -> Int in value.map { $0.map { $0 ? 3 : 2 } ?? 1 } ?? 0 }
        expectOrderPreserved([nil, .some(nil), .some(.some(false)), .some(.some(true))] as [Bool??],
                             compare: { comparableSign(rank($0), rank($1)) })
        // Importing Strata does not make Optional Comparable (no retroactive conformance).
        #expect(!(Int?.self is any Comparable.Type))
        #expect(throws: OrderedKeyError.self) { _ = try Int?(orderedKeyBytes: [2]) }
        expectTruncationsThrow(Int?.some(5), as: Int?.self)
    }

    @Test func rawRepresentableEnums() throws {
        expectOrderPreserved(KeyTestGenre.allCases)
        #expect(KeyTestGenre.ambient < KeyTestGenre.rock)  // raw-value order, not declaration order
        expectOrderPreserved([KeyTestLevel.low, .high, .middle])
        #expect(KeyTestLevel.middle < KeyTestLevel.high)
        #expect(throws: OrderedKeyError.self) { _ = try KeyTestGenre(orderedKeyBytes: "polka".orderedKeyBytes) }
        #expect(try KeyTestGenre(orderedKeyBytes: "jazz".orderedKeyBytes) == .jazz)
    }

    @Test func readerOverRawMemoryAndArrays() throws {
        let bytes = CompositeKey("ab", 7).orderedKeyBytes
        let fromBuffer = try bytes.withUnsafeBytes { try CompositeKey<String, Int>(orderedKeyBuffer: $0) }
        #expect(fromBuffer == CompositeKey("ab", 7))
        var reader = OrderedKeyReader(bytes)
        #expect(try reader.read(String.self) == "ab")
        #expect(try reader.read(Int.self) == 7)
        #expect(reader.isAtEnd)
    }
}
