/// Bytes of a key or value, handed out without copying.
///
/// A view into a read transaction points straight into the shared mapping and stays valid for the
/// life of that transaction; a view into a write transaction stays valid until the transaction's
/// next modification. That modification may take the view itself as its key, value or bound
/// (`put(cursor.key(), …)`, `put(k, get(other)!)`): it copies one that points into a page it
/// rearranges. Reading a view after that is memory-safe (the memory stays mapped while the
/// view exists) but may show newer bytes: copy with `Array(view)` or `bytes` to keep them.
public struct ByteView: RandomAccessCollection, Hashable, CustomStringConvertible {
    @usableFromInline let buffer: UnsafeRawBufferPointer
    /// Keeps the memory behind `buffer` alive (the mapping or the dirty page).
    @usableFromInline let owner: AnyObject?

    @inlinable init(_ buffer: UnsafeRawBufferPointer, owner: AnyObject?) {
        self.buffer = buffer
        self.owner = owner
    }

    /// Always 0.
    @inlinable public var startIndex: Int { 0 }
    /// The number of bytes.
    @inlinable public var endIndex: Int { buffer.count }
    /// The byte at `position`; an index out of range traps, in release builds too.
    @inlinable public subscript(position: Int) -> UInt8 {
        // Checked in release builds too: the buffer is raw memory (a mapping or a page buffer).
        precondition(position >= 0 && position < buffer.count, "ByteView index \(position) out of range 0..<\(buffer.count)")
        return buffer[position]
    }

    /// Calls `body` with the viewed memory, without copying; do not let the pointer escape `body`.
    @inlinable public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(buffer)
    }

    /// The viewed memory without a closure, for this package's code where `withUnsafeBytes`'s
    /// closure is not inlined (an unspecialized generic caller). Valid only while this view is
    /// alive (its owner keeps the memory): the caller binds its last use of the pointer to the
    /// view with `extendLifetime(view)` after it.
    @inlinable package var unsafeBytesWhileAlive: UnsafeRawBufferPointer { buffer }

    /// The bytes from `offset` to the end, without copying (the same lifetime as this view).
    public func subview(from offset: Int) -> ByteView {
        precondition(offset >= 0 && offset <= buffer.count, "ByteView offset \(offset) out of range 0...\(buffer.count)")
        return ByteView(UnsafeRawBufferPointer(rebasing: buffer[offset...]), owner: owner)
    }

    /// A copy that outlives the transaction.
    public var bytes: [UInt8] { Array(buffer) }

    /// Equal when the bytes are equal.
    public static func == (lhs: ByteView, rhs: ByteView) -> Bool { compareKeys(lhs.buffer, rhs.buffer) == 0 }
    /// Hashes the bytes.
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes: buffer) }

    /// The bytes as a quoted string when they are printable UTF-8, else as lowercase hex.
    public var description: String {
        if let text = String(validating: buffer, as: UTF8.self), text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) {
            return "\"\(text)\""
        }
        return buffer.map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined()
    }
}

/// Anything that can lend its bytes as a key or value.
public protocol BytesConvertible {
    /// Calls `body` with the bytes, valid only for the duration of the call.
    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result
}

extension Array: BytesConvertible where Element == UInt8 {
    /// The array's bytes.
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(body)
    }
}

extension ArraySlice: BytesConvertible where Element == UInt8 {
    /// The slice's bytes.
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try withUnsafeBytes(body)
    }
}

extension UnsafeRawBufferPointer: BytesConvertible {
    /// The buffer itself.
    @inlinable public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(self)
    }
}

extension ByteView: BytesConvertible {
    /// The viewed bytes, without copying.
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
