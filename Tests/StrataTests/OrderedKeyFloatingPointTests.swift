import Strata
import Testing

/// Total order used by the key encoding: NaN after +infinity (all NaNs equal), -0 == +0.
private func keyOrderSign<T: BinaryFloatingPoint>(_ lhs: T, _ rhs: T) -> Int {
    switch (lhs.isNaN, rhs.isNaN) {
    case (true, true): return 0
    case (true, false): return 1
    case (false, true): return -1
    case (false, false): return comparableSign(lhs, rhs)
    }
}

private func keyEqual<T: BinaryFloatingPoint>(_ lhs: T, _ rhs: T) -> Bool {
    (lhs.isNaN && rhs.isNaN) || lhs == rhs
}

@Suite("OrderedKey floating point")
struct OrderedKeyFloatingPointTests {
    @Test func doubleOrder() {
        var generator = makeCodingTestGenerator("Double order")
        var values: [Double] = [
            -.infinity, -.greatestFiniteMagnitude, -1e300, -1, -.leastNormalMagnitude, -.leastNonzeroMagnitude,
            -0.0, 0.0, .leastNonzeroMagnitude, .leastNormalMagnitude, 0.5, 1, 1.0000000000000002, 1e300,
            .greatestFiniteMagnitude, .infinity, .nan, -.nan, .signalingNaN, Double(bitPattern: 0x7FF8_0000_0000_1234),
        ]
        values += (0..<150).map { _ in Double(bitPattern: generator.next()) }  // includes NaNs and subnormals
        values += (0..<100).map { _ in Double.random(in: -1000...1000, using: &generator) }
        expectOrderPreserved(values, compare: keyOrderSign, isEqual: keyEqual)
    }

    @Test func floatOrder() {
        var generator = makeCodingTestGenerator("Float order")
        var values: [Float] = [
            -.infinity, -.greatestFiniteMagnitude, -1, -.leastNonzeroMagnitude, -0.0, 0.0,
            .leastNonzeroMagnitude, 1, .greatestFiniteMagnitude, .infinity, .nan, -.nan,
        ]
        values += (0..<150).map { _ in Float(bitPattern: UInt32(truncatingIfNeeded: generator.next())) }
        expectOrderPreserved(values, compare: keyOrderSign, isEqual: keyEqual)
    }

    @Test func negativeZeroIsCanonicalised() throws {
        #expect((-0.0 as Double).orderedKeyBytes == (0.0 as Double).orderedKeyBytes)
        #expect((-0.0 as Float).orderedKeyBytes == (0.0 as Float).orderedKeyBytes)
        let decoded = try Double(orderedKeyBytes: (-0.0 as Double).orderedKeyBytes)
        #expect(decoded.sign == .plus)
    }

    @Test func allNaNsShareOneKeyAfterInfinity() throws {
        let nanKeys = Set([Double.nan, -Double.nan, .signalingNaN, Double(bitPattern: 0xFFF0_0000_0000_0001)].map(\.orderedKeyBytes))
        #expect(nanKeys.count == 1)
        let nanKey = try #require(nanKeys.first)
        #expect(Double.infinity.orderedKeyBytes.lexicographicallyPrecedes(nanKey))
        #expect(try Double(orderedKeyBytes: nanKey).isNaN)
    }

    @Test func nonCanonicalEncodingsAreRejected() {
        // -0.0: sign bit set, all else zero → ordered form is all ones flipped: 0x7FFF…FF.
        #expect(throws: OrderedKeyError.self) { _ = try Double(orderedKeyBytes: [0x7F] + Array(repeating: 0xFF, count: 7)) }
        // A NaN with a payload other than the canonical one.
        let oddNaN = Double(bitPattern: 0x7FF8_0000_0000_0001)
        var writer = OrderedKeyWriter()
        writer.writeBigEndian(oddNaN.bitPattern | (1 << 63))
        #expect(throws: OrderedKeyError.self) { _ = try Double(orderedKeyBytes: writer.bytes) }
    }

    @Test func truncationsThrow() {
        expectTruncationsThrow(1.5 as Double, as: Double.self)
        expectTruncationsThrow(-1.5 as Float, as: Float.self)
    }
}
