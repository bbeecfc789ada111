// Fixed-width integers encode big-endian so that byte order equals numeric order.
// Signed integers additionally flip the sign bit: this maps two's complement
// [min, -1] ∪ [0, max] monotonically onto [0x00…, 0x7F…] ∪ [0x80…, 0xFF…].
// `Int`/`UInt` always use 8 bytes so that keys are identical across platforms.

@usableFromInline enum OrderedIntegerCoding {
    static func encodeUnsigned<T: FixedWidthInteger & UnsignedInteger>(_ value: T, into writer: inout OrderedKeyWriter) {
        writer.writeBigEndian(value)
    }

    static func encodeSigned<T: FixedWidthInteger & SignedInteger>(_ value: T, into writer: inout OrderedKeyWriter)
    where T.Magnitude: FixedWidthInteger & UnsignedInteger {
        writer.writeBigEndian(signFlipped(value))
    }

    /// The encoding of `encodeUnsigned`, lent from the stack.
    static func withUnsignedBytes<T: FixedWidthInteger & UnsignedInteger, R>(
        _ value: T, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R {
        try withUnsafeBytes(of: value.bigEndian, body)
    }

    /// The encoding of `encodeSigned`, lent from the stack.
    static func withSignedBytes<T: FixedWidthInteger & SignedInteger, R>(
        _ value: T, _ body: (UnsafeRawBufferPointer) throws -> R
    ) rethrows -> R where T.Magnitude: FixedWidthInteger & UnsignedInteger {
        try withUnsafeBytes(of: signFlipped(value).bigEndian, body)
    }

    private static func signFlipped<T: FixedWidthInteger & SignedInteger>(_ value: T) -> T.Magnitude
    where T.Magnitude: FixedWidthInteger & UnsignedInteger {
        let signBit: T.Magnitude = 1 << (T.bitWidth - 1)
        return T.Magnitude(truncatingIfNeeded: value) ^ signBit
    }

    @inlinable static func decodeSigned<T: FixedWidthInteger & SignedInteger>(_: T.Type, from reader: inout OrderedKeyReader) throws -> T
    where T.Magnitude: FixedWidthInteger & UnsignedInteger {
        let signBit: T.Magnitude = 1 << (T.bitWidth - 1)
        let bits = try reader.readBigEndian(T.Magnitude.self, reading: "\(T.self)")
        return T(truncatingIfNeeded: bits ^ signBit)
    }
}

extension UInt8: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeUnsigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withUnsignedBytes(self, body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> UInt8 { try reader.readBigEndian(UInt8.self) }
}

extension UInt16: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeUnsigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withUnsignedBytes(self, body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> UInt16 { try reader.readBigEndian(UInt16.self) }
}

extension UInt32: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeUnsigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withUnsignedBytes(self, body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> UInt32 { try reader.readBigEndian(UInt32.self) }
}

extension UInt64: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeUnsigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withUnsignedBytes(self, body) }
    @inlinable public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> UInt64 { try reader.readBigEndian(UInt64.self) }
}

extension UInt: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeUnsigned(UInt64(self), into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withUnsignedBytes(UInt64(self), body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> UInt {
        let start = reader.offset
        let wide = try reader.readBigEndian(UInt64.self, reading: "UInt")
        guard let value = UInt(exactly: wide) else {
            throw reader.invalid("\(wide) does not fit in this platform's UInt", reading: "UInt", at: start)
        }
        return value
    }
}

extension Int8: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeSigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withSignedBytes(self, body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Int8 { try OrderedIntegerCoding.decodeSigned(Int8.self, from: &reader) }
}

extension Int16: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeSigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withSignedBytes(self, body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Int16 { try OrderedIntegerCoding.decodeSigned(Int16.self, from: &reader) }
}

extension Int32: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeSigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withSignedBytes(self, body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Int32 { try OrderedIntegerCoding.decodeSigned(Int32.self, from: &reader) }
}

extension Int64: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeSigned(self, into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withSignedBytes(self, body) }
    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Int64 { try OrderedIntegerCoding.decodeSigned(Int64.self, from: &reader) }
}

extension Int: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) { OrderedIntegerCoding.encodeSigned(Int64(self), into: &writer) }
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows { try OrderedIntegerCoding.withSignedBytes(Int64(self), body) }
    @inlinable public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Int {
        let start = reader.offset
        let wide = try OrderedIntegerCoding.decodeSigned(Int64.self, from: &reader)
        guard let value = Int(exactly: wide) else {
            throw reader.invalid("\(wide) does not fit in this platform's Int", reading: "Int", at: start)
        }
        return value
    }
}
