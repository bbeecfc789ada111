// Integers: unsigned as a plain varint, signed as a ZigZag varint, whatever their width.
// A decoded value that does not fit the requested type is reported as corrupt rather than
// truncated, so e.g. reading an `Int8` field that holds 300 fails loudly.

enum BinaryInteger {
    @inline(__always)
    static func appendSigned<T: FixedWidthInteger & SignedInteger>(_ value: T, to buffer: inout BinaryOutputBuffer) {
        BinaryVarint.append(BinaryVarint.zigZag(Int64(value)), to: &buffer)
    }

    @inline(__always)
    static func appendUnsigned<T: FixedWidthInteger & UnsignedInteger>(_ value: T, to buffer: inout BinaryOutputBuffer) {
        BinaryVarint.append(UInt64(value), to: &buffer)
    }

    static func readSigned<T: FixedWidthInteger & SignedInteger>(_: T.Type, from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> T {
        let wide = BinaryVarint.unZigZag(try readWholeVarint(extent, what: T.self))
        guard let value = T(exactly: wide) else {
            throw BinaryFormatError("number \(wide) does not fit in \(T.self)")
        }
        return value
    }

    static func readUnsigned<T: FixedWidthInteger & UnsignedInteger>(_: T.Type, from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> T {
        let wide = try readWholeVarint(extent, what: T.self)
        guard let value = T(exactly: wide) else {
            throw BinaryFormatError("number \(wide) does not fit in \(T.self)")
        }
        return value
    }

    /// The varint filling `extent`. Extents of one or two bytes (values below 16384, most fields)
    /// are read inline; longer ones and every error go to `readLongVarint`.
    @inline(__always)
    private static func readWholeVarint<T>(_ extent: UnsafeRawBufferPointer, what: T.Type) throws(BinaryFormatError) -> UInt64 {
        if extent.count == 1, extent[0] < 0x80 { return UInt64(extent[0]) }
        if extent.count == 2, extent[0] >= 0x80, extent[1] < 0x80 {
            return UInt64(extent[0] & 0x7F) | UInt64(extent[1]) << 7
        }
        return try readLongVarint(extent, what: T.self)
    }

    @inline(never)
    private static func readLongVarint<T>(_ extent: UnsafeRawBufferPointer, what: T.Type) throws(BinaryFormatError) -> UInt64 {
        var offset = 0
        let value = try BinaryVarint.read(from: extent, at: &offset)
        guard offset == extent.count else {
            throw BinaryFormatError("\(T.self) varint of \(offset) byte(s) does not fill its \(extent.count)-byte slot")
        }
        return value
    }
}

/// Signed integers of up to 64 bits: a ZigZag varint.
protocol BinarySignedInteger: BinaryPrimitive, FixedWidthInteger, SignedInteger {}

extension BinarySignedInteger {
    @inline(__always) func appendBinary(to buffer: inout BinaryOutputBuffer) { BinaryInteger.appendSigned(self, to: &buffer) }
    @inline(__always) static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Self {
        try BinaryInteger.readSigned(Self.self, from: extent)
    }
}

/// Unsigned integers of up to 64 bits: a plain varint.
protocol BinaryUnsignedInteger: BinaryPrimitive, FixedWidthInteger, UnsignedInteger {}

extension BinaryUnsignedInteger {
    @inline(__always) func appendBinary(to buffer: inout BinaryOutputBuffer) { BinaryInteger.appendUnsigned(self, to: &buffer) }
    @inline(__always) static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Self {
        try BinaryInteger.readUnsigned(Self.self, from: extent)
    }
}

extension Int: BinarySignedInteger {}
extension Int8: BinarySignedInteger {}
extension Int16: BinarySignedInteger {}
extension Int32: BinarySignedInteger {}
extension Int64: BinarySignedInteger {}
extension UInt: BinaryUnsignedInteger {}
extension UInt8: BinaryUnsignedInteger {}
extension UInt16: BinaryUnsignedInteger {}
extension UInt32: BinaryUnsignedInteger {}
extension UInt64: BinaryUnsignedInteger {}

// 128-bit integers use the same varint forms, widened.

extension Int128: BinaryPrimitive {
    func appendBinary(to buffer: inout BinaryOutputBuffer) { BinaryVarint.appendWide(BinaryVarint.zigZag(self), to: &buffer) }

    static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Int128 {
        BinaryVarint.unZigZag(try readWholeWideVarint(extent, what: "Int128"))
    }
}

extension UInt128: BinaryPrimitive {
    func appendBinary(to buffer: inout BinaryOutputBuffer) { BinaryVarint.appendWide(self, to: &buffer) }

    static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> UInt128 {
        try readWholeWideVarint(extent, what: "UInt128")
    }
}

private func readWholeWideVarint(_ extent: UnsafeRawBufferPointer, what: StaticString) throws(BinaryFormatError) -> UInt128 {
    var offset = 0
    let value = try BinaryVarint.readWide(from: extent, at: &offset)
    guard offset == extent.count else {
        throw BinaryFormatError("\(what) varint of \(offset) byte(s) does not fill its \(extent.count)-byte slot")
    }
    return value
}
