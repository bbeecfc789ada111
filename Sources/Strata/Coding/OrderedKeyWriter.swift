/// Accumulates order-preserving key encodings into a byte array.
///
/// The primitives here are the building blocks conformers use; each one documents whether
/// its output is self-delimiting, because only self-delimiting pieces may be followed by
/// further components in a composite key.
public struct OrderedKeyWriter: Sendable {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8]

    public init(reservingCapacity capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Forgets the bytes written, keeping the buffer: a writer reused for one key after
    /// another allocates once.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// A writer with no storage of its own yet, to be handed a buffer by `swapBytes(with:)`.
    init(lendingTo _: Void) {
        bytes = []
    }

    /// Exchanges the bytes written with `other`'s, without copying: a write path appends a key
    /// to a buffer it reuses by swapping the buffer in, writing, and swapping it back.
    mutating func swapBytes(with other: inout [UInt8]) {
        swap(&bytes, &other)
    }

    /// Appends one raw byte (fixed width, hence self-delimiting when the reader knows the width).
    public mutating func writeByte(_ byte: UInt8) {
        bytes.append(byte)
    }

    /// Appends an unsigned integer most-significant byte first, so that byte order equals
    /// numeric order. Fixed width, hence self-delimiting.
    public mutating func writeBigEndian<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes verbatim. Not self-delimiting by itself: only for fields whose width
    /// the reader knows in advance (such as the 16 bytes of a UUID).
    public mutating func writeFixedWidthBytes(_ raw: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: raw)
    }

    /// Appends a variable-length byte string in escaped, terminated form:
    /// every `0x00` becomes `0x00 0xFF` and the string ends with `0x00 0x00`.
    ///
    /// Why this preserves order: inside the string a literal zero byte is followed by `0xFF`,
    /// while the end is followed by `0x00`, so at the first difference a shorter string
    /// (terminator) sorts before any extension (payload byte `>= 0x01`, or escaped zero
    /// `0x00 0xFF`). The terminator makes the result self-delimiting.
    public mutating func writeEscaped<Bytes: Sequence<UInt8>>(_ payload: Bytes) {
        let handledContiguously: Void? = payload.withContiguousStorageIfAvailable { buffer in
            writeEscaped(UnsafeRawBufferPointer(buffer))
        }
        if handledContiguously != nil { return }
        for byte in payload {
            bytes.append(byte)
            if byte == 0 { bytes.append(0xFF) }
        }
        bytes.append(0)
        bytes.append(0)
    }

    /// `writeEscaped(_:)` for contiguous memory: copies the runs between zero bytes in bulk.
    public mutating func writeEscaped(_ payload: UnsafeRawBufferPointer) {
        var runStart = 0
        for index in payload.indices where payload[index] == 0 {
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[runStart...index]))
            bytes.append(0xFF)
            runStart = index + 1
        }
        bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: payload[runStart...]))
        bytes.append(0)
        bytes.append(0)
    }

    /// Appends another key's encoding (used for composites and wrappers).
    public mutating func write<Key: OrderedKey>(_ key: Key) {
        key.encodeOrderedKey(into: &self)
    }

    /// The smallest byte string that is greater than every byte string starting with
    /// `prefix`, or `nil` if there is none (empty prefix or all bytes `0xFF`).
    ///
    /// Use it as the exclusive upper bound of a range scan over a leading component:
    /// all keys `k` with `prefix <= k < prefixUpperBound(of: prefix)` start with `prefix`.
    /// Computed by dropping trailing `0xFF` bytes and incrementing the last remaining byte.
    public static func prefixUpperBound(of prefix: [UInt8]) -> [UInt8]? {
        var bound = prefix
        while let last = bound.last {
            if last == 0xFF {
                bound.removeLast()
            } else {
                bound[bound.count - 1] = last + 1
                return bound
            }
        }
        return nil
    }
}
