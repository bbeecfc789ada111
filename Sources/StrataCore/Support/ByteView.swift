/// Bytes of a key or value, handed out without copying.
///
/// A view into a read transaction points straight into the shared mapping and stays valid for the
/// life of that transaction; a view into a write transaction stays valid until the transaction's
/// next modification. Reading a view after that is memory-safe (the memory stays mapped while the
/// view exists) but may show newer bytes: copy with `Array(view)` or `bytes` to keep them.
public struct ByteView: RandomAccessCollection, Hashable, CustomStringConvertible {
    @usableFromInline let buffer: UnsafeRawBufferPointer
    /// Keeps the memory behind `buffer` alive (the mapping or the dirty page).
    @usableFromInline let owner: AnyObject?

    @inlinable init(_ buffer: UnsafeRawBufferPointer, owner: AnyObject?) {
        self.buffer = buffer
        self.owner = owner
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { buffer.count }
    @inlinable public subscript(position: Int) -> UInt8 {
        // Checked in release builds too: the buffer is raw memory (a mapping or a page buffer).
        precondition(position >= 0 && position < buffer.count, "ByteView index \(position) out of range 0..<\(buffer.count)")
        return buffer[position]
    }

    @inlinable public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(buffer)
    }

    /// The bytes from `offset` to the end, without copying (the same lifetime as this view).
    public func subview(from offset: Int) -> ByteView {
        precondition(offset >= 0 && offset <= buffer.count, "ByteView offset \(offset) out of range 0...\(buffer.count)")
        return ByteView(UnsafeRawBufferPointer(rebasing: buffer[offset...]), owner: owner)
    }

    /// A copy that outlives the transaction.
    public var bytes: [UInt8] { Array(buffer) }

    public static func == (lhs: ByteView, rhs: ByteView) -> Bool { compareKeys(lhs.buffer, rhs.buffer) == 0 }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes: buffer) }

    public var description: String {
        if let text = String(validating: buffer, as: UTF8.self), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) {
            return "\"\(text)\""
        }
        return buffer.map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined()
    }
}

/// Anything that can lend its bytes as a key or value.
public protocol BytesConvertible {
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
}

extension Array: BytesConvertible where Element == UInt8 {
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(body)
    }
}

extension ArraySlice: BytesConvertible where Element == UInt8 {
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(body)
    }
}

extension UnsafeRawBufferPointer: BytesConvertible {
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(self)
    }
}

extension ByteView: BytesConvertible {
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(buffer)
    }
}

extension String: BytesConvertible {
    /// The UTF-8 bytes of the string.
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var copy = self
        return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
    }
}
