import Strata
import Testing

@Suite("OrderedKey integers")
struct OrderedKeyIntegerTests {
    private func values<T: FixedWidthInteger>(_: T.Type, using generator: inout CodingTestGenerator) -> [T] {
        var values: [T] = [.min, .min + 1, .max, .max - 1, 0, 1, 2, 127, 128, 255, 256]
        if T.isSigned { values += [-1, -2, -128, -129] }
        values += (0..<150).map { _ in T.random(in: .min ... .max, using: &generator) }
        // Values differing only in low bytes exercise the big-endian tail.
        values += (0..<50).map { _ in T(truncatingIfNeeded: Int8.random(in: .min ... .max, using: &generator)) }
        return values
    }

    private func check<T: FixedWidthInteger & OrderedKey>(_ type: T.Type, _ name: String) {
        var generator = makeCodingTestGenerator("integers \(name)")
        let values = values(T.self, using: &generator)
        expectOrderPreserved(values)
        for value in values.prefix(6) {
            #expect(value.orderedKeyBytes.count == max(1, T.bitWidth / 8) || T.self == Int.self || T.self == UInt.self)
            expectTruncationsThrow(value, as: T.self)
        }
    }

    @Test func int8() { check(Int8.self, "Int8") }
    @Test func int16() { check(Int16.self, "Int16") }
    @Test func int32() { check(Int32.self, "Int32") }
    @Test func int64() { check(Int64.self, "Int64") }
    @Test func int() { check(Int.self, "Int") }
    @Test func uint8() { check(UInt8.self, "UInt8") }
    @Test func uint16() { check(UInt16.self, "UInt16") }
    @Test func uint32() { check(UInt32.self, "UInt32") }
    @Test func uint64() { check(UInt64.self, "UInt64") }
    @Test func uint() { check(UInt.self, "UInt") }

    @Test func platformIntegersUseEightBytes() {
        #expect(Int(5).orderedKeyBytes == Int64(5).orderedKeyBytes)
        #expect(UInt(5).orderedKeyBytes == UInt64(5).orderedKeyBytes)
        #expect(Int(-1).orderedKeyBytes == [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    }

    @Test func trailingBytesAreRejected() {
        #expect(throws: OrderedKeyError.self) { _ = try Int32(orderedKeyBytes: Int32(7).orderedKeyBytes + [0]) }
    }
}
