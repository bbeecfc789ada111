/// Accumulates order-preserving key encodings into a byte array.
///
/// The primitives here are the building blocks conformers use; each one documents whether
/// its output is self-delimiting, because only self-delimiting pieces may be followed by
/// further components in a composite key.
public struct OrderedKeyWriter: Sendable {
    /// The bytes written so far. A writer a write path lends to `encodeOrderedKey(into:)` may
    /// already hold bytes of earlier keys before this value's (see `OrderedKey`).
    public private(set) var bytes: [UInt8]
    /// How many of `bytes` were lent with the buffer (`init(borrowing:)`), not written here.
    private var lentCount = 0
    /// Whether `removeAll()` dropped lent bytes (a conformer's misuse, reported by `returnBytes`).
    private var droppedLentBytes = false

    public init(reservingCapacity capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Forgets the bytes written, keeping the buffer: a writer reused for one key after
    /// another allocates once. Not for use inside `encodeOrderedKey(into:)` (which only appends).
    public mutating func removeAll() {
        if lentCount > 0 { droppedLentBytes = true }
        bytes.removeAll(keepingCapacity: true)
    }

    /// A writer appending to `buffer`, which it takes without copying (left empty) until
    /// `returnBytes(to:)`: a write path appends a key to a buffer it reuses.
    init(borrowing buffer: inout [UInt8]) {
        bytes = []
        swap(&bytes, &buffer)
        lentCount = bytes.count
    }

    /// Gives the bytes back to `buffer`, for a writer made by `init(borrowing:)` from a buffer of
    /// `lent` bytes. Returns whether those bytes are still its first ones, that is whether the code
    /// that wrote only appended: false if it cleared the writer (`removeAll()`) or replaced it with
    /// another one (whose `lentCount` is 0), when there were lent bytes to lose.
    mutating func returnBytes(to buffer: inout [UInt8], lent: Int) -> Bool {
        swap(&bytes, &buffer)
        return lent == 0 || (!droppedLentBytes && lentCount == lent && buffer.count >= lent)
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
