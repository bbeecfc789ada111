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

extension Double: OrderedKey {
    /// Writes 8 bytes; `-0.0` is written as `+0.0` and every NaN as `.nan` (sorting after `+infinity`).
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        let canonical: Double = isNaN ? .nan : (self == 0 ? 0 : self)
        writer.writeBigEndian(OrderedFloatCoding.orderedBits(canonical.bitPattern))
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Double {
        let start = reader.offset
        let ordered = try reader.readBigEndian(UInt64.self, reading: "Double")
        let value = Double(bitPattern: OrderedFloatCoding.ieeeBits(fromOrdered: ordered))
        guard (!value.isNaN || value.bitPattern == Double.nan.bitPattern),
              !(value == 0 && value.sign == .minus) else {
            throw reader.invalid("non-canonical NaN or -0.0", reading: "Double", at: start)
        }
        return value
    }
}

extension Float: OrderedKey {
    /// Writes 4 bytes; `-0.0` is written as `+0.0` and every NaN as `.nan` (sorting after `+infinity`).
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        let canonical: Float = isNaN ? .nan : (self == 0 ? 0 : self)
        writer.writeBigEndian(OrderedFloatCoding.orderedBits(canonical.bitPattern))
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Float {
        let start = reader.offset
        let ordered = try reader.readBigEndian(UInt32.self, reading: "Float")
        let value = Float(bitPattern: OrderedFloatCoding.ieeeBits(fromOrdered: ordered))
        guard (!value.isNaN || value.bitPattern == Float.nan.bitPattern),
              !(value == 0 && value.sign == .minus) else {
            throw reader.invalid("non-canonical NaN or -0.0", reading: "Float", at: start)
        }
        return value
    }
}
