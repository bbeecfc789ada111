// IEEE-754 values become order-preserving unsigned integers:
// positives get the sign bit set (so they sort above all negatives, by magnitude),
// negatives get all bits flipped (so a larger magnitude sorts lower).
//
// Canonicalisation (needed because `==` and the byte order must agree):
// - `-0.0` is written as `+0.0`, since `-0.0 == 0.0`.
// - Every NaN is written as the single positive quiet NaN (`.nan`), which sorts after
//   `+infinity`. This gives NaN a place in the total byte order even though `<` leaves it
//   unordered: a key containing NaN compares *greater* than every number byte-wise, and all
//   NaNs share one key. Decoding yields `.nan`; decoding any other NaN pattern or `-0.0`
//   throws, because no writer produces them.

enum OrderedFloatCoding {
    static func orderedBits<Bits: FixedWidthInteger & UnsignedInteger>(_ bits: Bits) -> Bits {
        let signBit: Bits = 1 << (Bits.bitWidth - 1)
        return bits & signBit != 0 ? ~bits : bits | signBit
    }

    static func ieeeBits<Bits: FixedWidthInteger & UnsignedInteger>(fromOrdered ordered: Bits) -> Bits {
        let signBit: Bits = 1 << (Bits.bitWidth - 1)
        return ordered & signBit != 0 ? ordered ^ signBit : ~ordered
    }
}

/// The IEEE-754 types keys are made of: their bit pattern is what `OrderedFloatCoding` orders.
protocol OrderedKeyFloatingPoint: BinaryFloatingPoint {
    associatedtype BitPattern: FixedWidthInteger & UnsignedInteger
    var bitPattern: BitPattern { get }
    init(bitPattern: BitPattern)
}

extension OrderedFloatCoding {
    /// Writes the value's ordered bits, big-endian; `-0.0` as `+0.0`, every NaN as `.nan`.
    @inline(__always)
    static func encode<Value: OrderedKeyFloatingPoint>(_ value: Value, into writer: inout OrderedKeyWriter) {
        let canonical: Value = value.isNaN ? .nan : (value == 0 ? 0 : value)
        writer.writeBigEndian(orderedBits(canonical.bitPattern))
    }

    /// Reads what `encode` wrote; a NaN other than `.nan`, or `-0.0`, no writer produces and is refused.
    @inline(__always)
    static func decode<Value: OrderedKeyFloatingPoint>(_: Value.Type, from reader: inout OrderedKeyReader) throws -> Value {
        let start = reader.offset
        let ordered = try reader.readBigEndian(Value.BitPattern.self, reading: "\(Value.self)")
        let value = Value(bitPattern: ieeeBits(fromOrdered: ordered))
        guard (!value.isNaN || value.bitPattern == Value.nan.bitPattern),
              !(value == 0 && value.sign == .minus) else {
            throw reader.invalid("non-canonical NaN or -0.0", reading: "\(Value.self)", at: start)
        }
        return value
    }
}

extension Double: OrderedKey, OrderedKeyFloatingPoint {
    /// Writes 8 bytes; `-0.0` is written as `+0.0` and every NaN as `.nan` (sorting after `+infinity`).
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedFloatCoding.encode(self, into: &writer) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Double { try OrderedFloatCoding.decode(Double.self, from: &reader) }
}

extension Float: OrderedKey, OrderedKeyFloatingPoint {
    /// Writes 4 bytes; `-0.0` is written as `+0.0` and every NaN as `.nan` (sorting after `+infinity`).
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedFloatCoding.encode(self, into: &writer) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Float { try OrderedFloatCoding.decode(Float.self, from: &reader) }
}
