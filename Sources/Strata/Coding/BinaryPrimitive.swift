/// A scalar the binary coder writes directly instead of through `Codable` containers.
///
/// Invariant: a value always occupies a known extent (the whole top-level buffer, or a
/// length-prefixed slot in a container), and `readBinary(from:)` receives exactly that
/// extent. Readers must consume it entirely and reject anything else, which catches most
/// corruption and type confusion. Every encoding is at least one byte long, so an empty
/// extent is free to mean `nil`.
protocol BinaryPrimitive {
    func appendBinary(to buffer: inout BinaryOutputBuffer)
    static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Self
}

/// Bool: one byte, 0 or 1.
extension Bool: BinaryPrimitive {
    func appendBinary(to buffer: inout BinaryOutputBuffer) {
        buffer.append(self ? 1 : 0)
    }

    static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Bool {
        guard extent.count == 1, extent[0] <= 1 else {
            throw BinaryFormatError("Bool must be a single byte 0 or 1, found \(extent.count) byte(s)")
        }
        return extent[0] == 1
    }
}

/// String: varint byte count, then the UTF-8 bytes (validated on read).
extension String: BinaryPrimitive {
    func appendBinary(to buffer: inout BinaryOutputBuffer) {
        buffer.appendLengthPrefixedUTF8(self)
    }

    static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> String {
        var offset = 0
        let length = try BinaryVarint.readLength(from: extent, at: &offset, of: "String")
        guard offset + length == extent.count else {
            throw BinaryFormatError("String of \(length) byte(s) does not fill its \(extent.count)-byte slot")
        }
        guard let string = BinaryUTF8.string(from: UnsafeRawBufferPointer(rebasing: extent[offset...])) else {
            throw BinaryFormatError("String bytes are not valid UTF-8")
        }
        return string
    }
}

/// Double: 8 bytes, IEEE-754 bit pattern, little-endian (bit-exact, including NaN payloads).
extension Double: BinaryPrimitive {
    func appendBinary(to buffer: inout BinaryOutputBuffer) {
        buffer.appendLittleEndian(bitPattern)
    }

    static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Double {
        Double(bitPattern: try BinaryFixedWidth.readLittleEndian(UInt64.self, from: extent, what: "Double"))
    }
}

/// Float: 4 bytes, IEEE-754 bit pattern, little-endian.
extension Float: BinaryPrimitive {
    func appendBinary(to buffer: inout BinaryOutputBuffer) {
        buffer.appendLittleEndian(bitPattern)
    }

    static func readBinary(from extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Float {
        Float(bitPattern: try BinaryFixedWidth.readLittleEndian(UInt32.self, from: extent, what: "Float"))
    }
}

enum BinaryFixedWidth {
    /// Reads an extent that must be exactly `T`'s size.
    static func readLittleEndian<T: FixedWidthInteger>(_: T.Type, from extent: UnsafeRawBufferPointer, what: StaticString) throws(BinaryFormatError) -> T {
        guard extent.count == MemoryLayout<T>.size else {
            throw BinaryFormatError("\(what) must be \(MemoryLayout<T>.size) bytes, found \(extent.count)")
        }
        return T(littleEndian: extent.loadUnaligned(as: T.self))
    }
}
