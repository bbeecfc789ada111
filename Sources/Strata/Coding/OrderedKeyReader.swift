/// Reads order-preserving key encodings with bounds checks on every access.
///
/// It can read from an owned `[UInt8]` or, without copying, from raw memory such as a page
/// buffer. In the latter case the caller guarantees the memory stays valid and unmodified
/// while the reader is used. Every read either succeeds entirely or throws
/// `OrderedKeyError` without advancing, and never touches memory outside the bytes.
public struct OrderedKeyReader {
    private enum Storage {
        case owned([UInt8])
        case borrowed(UnsafeRawBufferPointer)
    }

    private let storage: Storage

    /// Number of bytes consumed so far.
    public private(set) var offset: Int = 0

    /// Total number of bytes available to the reader.
    public let count: Int

    /// Reads from an array; the reader keeps the array alive.
    public init(_ bytes: [UInt8]) {
        storage = .owned(bytes)
        count = bytes.count
    }

    /// Reads directly from memory that must outlive every use of this reader.
    public init(_ buffer: UnsafeRawBufferPointer) {
        storage = .borrowed(buffer)
        count = buffer.count
    }

    public var remainingCount: Int { count - offset }
    public var isAtEnd: Bool { offset == count }

    /// Runs `body` on the whole underlying buffer. Kept non-throwing so that it works for
    /// both storage kinds without re-throwing machinery; errors are returned as values.
    private func withBuffer<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch storage {
        case .owned(let array): return array.withUnsafeBytes(body)
        case .borrowed(let buffer): return body(buffer)
        }
    }

    private func require(_ needed: Int, reading: @autoclosure () -> String) throws(OrderedKeyError) {
        guard remainingCount >= needed else {
            throw .truncated(offset: offset, needed: needed, available: remainingCount, reading: reading())
        }
    }

    /// Reads one byte.
    public mutating func readByte(reading: @autoclosure () -> String = "byte") throws(OrderedKeyError) -> UInt8 {
        try require(1, reading: reading())
        let position = offset
        let byte = withBuffer { $0[position] }
        offset += 1
        return byte
    }

    /// Reads a fixed-width unsigned integer written by `OrderedKeyWriter.writeBigEndian(_:)`.
    public mutating func readBigEndian<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, reading: @autoclosure () -> String = "\(T.self)"
    ) throws(OrderedKeyError) -> T {
        let width = T.bitWidth / 8
        try require(width, reading: reading())
        let start = offset
        let value = withBuffer { buffer in
            var result: T = 0
            for index in start..<(start + width) {
                result = (result << 8) | T(buffer[index])
            }
            return result
        }
        offset += width
        return value
    }

    /// Reads exactly `destination.count` bytes verbatim (the counterpart of
    /// `OrderedKeyWriter.writeFixedWidthBytes(_:)`).
    public mutating func readFixedWidthBytes(
        into destination: UnsafeMutableRawBufferPointer, reading: @autoclosure () -> String = "fixed-width bytes"
    ) throws(OrderedKeyError) {
        try require(destination.count, reading: reading())
        let range = offset..<(offset + destination.count)
        withBuffer { destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[range])) }
        offset += destination.count
    }

    /// Reads a string written by `OrderedKeyWriter.writeEscaped(_:)`, returning the
    /// unescaped payload. Rejects `0x00` followed by anything but `0x00` or `0xFF`.
    public mutating func readEscaped(reading: @autoclosure () -> String = "escaped bytes") throws(OrderedKeyError) -> [UInt8] {
        let start = offset
        let total = count
        let result: Result<(payload: [UInt8], end: Int), OrderedKeyError> = withBuffer { buffer in
            var payload: [UInt8] = []
            var index = start
            var runStart = start  // first byte not yet copied to `payload`
            while index < total {
                if buffer[index] != 0 {
                    index += 1
                    continue
                }
                guard index + 1 < total else { break }
                payload.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[runStart..<index]))
                switch buffer[index + 1] {
                case 0x00: return .success((payload, index + 2))
                case 0xFF: payload.append(0)
                default:
                    return .failure(.invalid(
                        offset: index, reading: reading(),
                        reason: "0x00 must be followed by 0x00 (end) or 0xFF (escaped zero)"))
                }
                index += 2
                runStart = index
            }
            return .failure(.truncated(
                offset: start, needed: total - start + 1, available: total - start,
                reading: "\(reading()) (missing 0x00 0x00 terminator)"))
        }
        let (payload, end) = try result.get()
        offset = end
        return payload
    }

    /// Moves past a string written by `OrderedKeyWriter.writeEscaped(_:)` without copying its
    /// payload; accepts and rejects exactly what `readEscaped` does.
    public mutating func skipEscaped(reading: @autoclosure () -> String = "escaped bytes") throws(OrderedKeyError) {
        let start = offset
        let total = count
        let result: Result<Int, OrderedKeyError> = withBuffer { buffer in
            var index = start
            while index < total {
                if buffer[index] != 0 {
                    index += 1
                    continue
                }
                guard index + 1 < total else { break }
                switch buffer[index + 1] {
                case 0x00: return .success(index + 2)
                case 0xFF: index += 2
                default:
                    return .failure(.invalid(
                        offset: index, reading: reading(),
                        reason: "0x00 must be followed by 0x00 (end) or 0xFF (escaped zero)"))
                }
            }
            return .failure(.truncated(
                offset: start, needed: total - start + 1, available: total - start,
                reading: "\(reading()) (missing 0x00 0x00 terminator)"))
        }
        offset = try result.get()
    }

    /// Reads one nested key of type `Key`.
    public mutating func read<Key: OrderedKey>(_: Key.Type) throws -> Key {
        try Key.decodeOrderedKey(from: &self)
    }

    /// Throws unless every byte has been consumed.
    public func expectEnd() throws(OrderedKeyError) {
        guard isAtEnd else { throw .trailingBytes(offset: offset, count: remainingCount) }
    }

    /// Builds an `.invalid` error positioned at `offset` (for conformers' validation).
    public func invalid(_ reason: String, reading: String, at position: Int? = nil) -> OrderedKeyError {
        .invalid(offset: position ?? offset, reading: reading, reason: reason)
    }
}
