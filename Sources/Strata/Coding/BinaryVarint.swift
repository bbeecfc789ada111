/// LEB128 variable-length integers (7 payload bits per byte, least significant group first,
/// high bit set on every byte but the last) and ZigZag mapping for signed values, so that
/// small magnitudes of either sign take few bytes.
enum BinaryVarint {
    static func append(_ value: UInt64, to bytes: inout [UInt8]) { appendGroups(value, to: &bytes) }

    /// The encoder's form: lengths, counts and small integers (below 128) take the inlined
    /// one-byte path.
    @inline(__always)
    static func append(_ value: UInt64, to buffer: inout BinaryOutputBuffer) {
        if value < 0x80 {
            buffer.append(UInt8(truncatingIfNeeded: value))
        } else {
            appendMultiByte(value, to: &buffer)
        }
    }

    @inline(never)
    private static func appendMultiByte(_ value: UInt64, to buffer: inout BinaryOutputBuffer) {
        appendGroups(value, to: &buffer)
    }

    /// Writes `value` as 7-bit groups, least significant first (the layout `readGroups` reads).
    @inline(__always)
    private static func appendGroups<Value: FixedWidthInteger & UnsignedInteger, Destination: BinaryByteAppending & ~Copyable>(
        _ value: Value, to bytes: inout Destination
    ) {
        var remaining = value
        while remaining >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(remaining))
    }

    static func zigZag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value &<< 1) ^ (value >> 63))
    }

    static func unZigZag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ (0 &- Int64(bitPattern: value & 1))
    }

    /// Reads a varint starting at `offset`, advancing `offset` past it only on success.
    /// Never reads at or beyond `buffer.count`; rejects encodings that overflow 64 bits.
    @inline(__always)
    static func read(from buffer: UnsafeRawBufferPointer, at offset: inout Int) throws(BinaryFormatError) -> UInt64 {
        // Fast path: lengths and counts are almost always below 128 (one byte).
        if offset < buffer.count {
            let byte = buffer[offset]
            if byte < 0x80 {
                offset += 1
                return UInt64(byte)
            }
        }
        return try readMultiByte(from: buffer, at: &offset)
    }

    /// Kept out of line: the inlined fast path above carries no loop.
    @inline(never)
    private static func readMultiByte(from buffer: UnsafeRawBufferPointer, at offset: inout Int) throws(BinaryFormatError) -> UInt64 {
        try readGroups(UInt64.self, from: buffer, at: &offset)
    }

    /// Reads a varint of at most `Value.bitWidth` bits: 7-bit groups, low first, the high bit of
    /// each byte set while more follow; the last possible byte may only carry the bits left.
    @inline(__always)
    private static func readGroups<Value: FixedWidthInteger & UnsignedInteger>(
        _: Value.Type, from buffer: UnsafeRawBufferPointer, at offset: inout Int
    ) throws(BinaryFormatError) -> Value {
        let lastShift = (Value.bitWidth - 1) / 7 * 7
        let lastByteLimit = UInt8(1 << (Value.bitWidth - lastShift)) - 1
        var position = offset
        var result: Value = 0
        var shift = 0
        while position < buffer.count {
            let byte = buffer[position]
            position += 1
            if shift == lastShift && byte > lastByteLimit {
                throw BinaryFormatError("varint at byte \(offset) overflows \(Value.bitWidth) bits")
            }
            result |= Value(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                offset = position
                return result
            }
            shift += 7
        }
        throw BinaryFormatError("truncated varint at byte \(offset) (\(buffer.count - offset) byte(s) left)")
    }

    /// Reads a length prefix and checks that that many bytes actually follow, so a forged
    /// length can never cause an out-of-bounds read or an oversized allocation.
    @inline(__always)
    static func readLength(from buffer: UnsafeRawBufferPointer, at offset: inout Int, of what: StaticString) throws(BinaryFormatError) -> Int {
        let start = offset
        let length = try read(from: buffer, at: &offset)
        let remaining = buffer.count - offset
        guard length <= UInt64(remaining) else {
            offset = start
            throw lengthError(what, length: length, at: start, remaining: remaining)
        }
        return Int(length)
    }

    /// Kept out of line so that the inlined callers carry no message-building code.
    @inline(never)
    private static func lengthError(_ what: StaticString, length: UInt64, at start: Int, remaining: Int) -> BinaryFormatError {
        BinaryFormatError("\(what) length \(length) at byte \(start) exceeds the \(remaining) remaining byte(s)")
    }

    // MARK: 128-bit integers (rare; kept separate so the 64-bit paths stay simple)

    static func appendWide(_ value: UInt128, to buffer: inout BinaryOutputBuffer) { appendGroups(value, to: &buffer) }

    static func zigZag(_ value: Int128) -> UInt128 {
        UInt128(bitPattern: (value &<< 1) ^ (value >> 127))
    }

    static func unZigZag(_ value: UInt128) -> Int128 {
        Int128(bitPattern: value >> 1) ^ (0 &- Int128(bitPattern: value & 1))
    }

    /// Reads a varint of up to 128 bits; the 19th byte may only carry the top two bits.
    static func readWide(from buffer: UnsafeRawBufferPointer, at offset: inout Int) throws(BinaryFormatError) -> UInt128 {
        try readGroups(UInt128.self, from: buffer, at: &offset)
    }
}

/// Where varints can be written: a byte array (`FieldEvolution`) or the encoder's buffer.
protocol BinaryByteAppending: ~Copyable {
    mutating func append(_ byte: UInt8)
}

extension Array: BinaryByteAppending where Element == UInt8 {}
extension BinaryOutputBuffer: BinaryByteAppending {}
