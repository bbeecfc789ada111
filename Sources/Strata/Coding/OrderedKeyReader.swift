/// Reads order-preserving key encodings with bounds checks on every access.
///
/// It can read from an owned `[UInt8]` or, without copying, from raw memory such as a page
/// buffer. In the latter case the caller guarantees the memory stays valid and unmodified
/// while the reader is used. Every read either succeeds entirely or throws
/// `OrderedKeyError` without advancing, and never touches memory outside the bytes.
///
/// The fixed-width reads are `@inlinable`: other modules (the entity store) decode keys in
/// tight loops, and an unspecialised generic call per integer cost more than the read itself.
public struct OrderedKeyReader {
    @usableFromInline enum Storage {
        case owned([UInt8])
        case borrowed(UnsafeRawBufferPointer)
    }

    @usableFromInline let storage: Storage

    /// Number of bytes consumed so far.
    public var offset: Int { position }
    @usableFromInline var position: Int = 0

    /// Total number of bytes available to the reader.
    public let count: Int

    /// Reads from an array; the reader keeps the array alive.
    @inlinable public init(_ bytes: [UInt8]) {
        storage = .owned(bytes)
        count = bytes.count
    }

    /// Reads directly from memory that must outlive every use of this reader.
    @inlinable public init(_ buffer: UnsafeRawBufferPointer) {
        storage = .borrowed(buffer)
        count = buffer.count
    }

    @inlinable public var remainingCount: Int { count - position }
    @inlinable public var isAtEnd: Bool { position == count }

    /// Runs `body` on the whole underlying buffer. Kept non-throwing so that it works for
    /// both storage kinds without re-throwing machinery; errors are returned as values.
    @inlinable func withBuffer<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch storage {
        case .owned(let array): return array.withUnsafeBytes(body)
        case .borrowed(let buffer): return body(buffer)
        }
    }

    @inlinable func require(_ needed: Int, reading: @autoclosure () -> String) throws(OrderedKeyError) {
        guard remainingCount >= needed else { throw truncated(needed, reading: reading()) }
    }

    /// The error of a read that needs more bytes than remain (kept out of line).
    @usableFromInline func truncated(_ needed: Int, reading: String) -> OrderedKeyError {
        .truncated(offset: position, needed: needed, available: remainingCount, reading: reading)
    }

    /// Reads one byte.
    @inlinable public mutating func readByte(reading: @autoclosure () -> String = "byte") throws(OrderedKeyError) -> UInt8 {
        try require(1, reading: reading())
        let at = position
        let byte = withBuffer { $0[at] }
        position += 1
        return byte
    }

    /// Reads a fixed-width unsigned integer written by `OrderedKeyWriter.writeBigEndian(_:)`.
    @inlinable public mutating func readBigEndian<T: FixedWidthInteger & UnsignedInteger>(
        _: T.Type, reading: @autoclosure () -> String = "\(T.self)"
    ) throws(OrderedKeyError) -> T {
        let width = T.bitWidth / 8
        try require(width, reading: reading())
        let start = position
        let value = withBuffer { T(bigEndian: $0.loadUnaligned(fromByteOffset: start, as: T.self)) }
        position += width
        return value
    }

    /// Reads exactly `destination.count` bytes verbatim (the counterpart of
    /// `OrderedKeyWriter.writeFixedWidthBytes(_:)`).
    @inlinable public mutating func readFixedWidthBytes(
        into destination: UnsafeMutableRawBufferPointer, reading: @autoclosure () -> String = "fixed-width bytes"
    ) throws(OrderedKeyError) {
        try require(destination.count, reading: reading())
        let range = position..<(position + destination.count)
        withBuffer { destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[range])) }
        position += destination.count
    }

    /// Moves past `count` bytes (a length-prefixed field the caller reads in place).
    @inlinable public mutating func skip(_ count: Int, reading: @autoclosure () -> String = "skipped bytes") throws(OrderedKeyError) {
        precondition(count >= 0, "cannot skip a negative count")
        try require(count, reading: reading())
        position += count
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
        position = end
        return payload
    }

    /// Moves past a string written by `OrderedKeyWriter.writeEscaped(_:)` without copying its
    /// payload; accepts and rejects exactly what `readEscaped` does.
    public mutating func skipEscaped(reading: @autoclosure () -> String = "escaped bytes") throws(OrderedKeyError) {
        let start = offset
        let total = count
        let end: Int? = withBuffer { Self.escapedEnd(in: $0, from: start) }
        if let end {
            position = end
            return
        }
        throw escapedFailure(from: start, total: total, reading: reading())
    }

    /// Where the escaped string starting at `start` ends (just after its `0x00 0x00`), or nil if
    /// it is damaged or unterminated. A plain loop over the bytes: the hot part of reading the
    /// identifier out of a string index's key.
    static func escapedEnd(in buffer: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard let base = buffer.baseAddress else { return nil }
        let total = buffer.count
        var index = start
        while index < total {
            // Eight bytes at a time (the classic "has a zero byte" test on a little-endian word:
            // its lowest flagged byte is the first zero byte, as a borrow only propagates from a
            // zero byte upwards), straight to the first zero byte.
            if total - index >= 8 {
                let word = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let zeros = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
                if zeros == 0 {
                    index += 8
                    continue
                }
                index += zeros.trailingZeroBitCount / 8
            }
            if base.load(fromByteOffset: index, as: UInt8.self) != 0 {
                index += 1
                continue
            }
            guard index + 1 < total else { return nil }
            switch base.load(fromByteOffset: index + 1, as: UInt8.self) {
            case 0x00: return index + 2
            case 0xFF: index += 2
            default: return nil
            }
        }
        return nil
    }

    /// The error `skipEscaped` throws for the damaged or unterminated string at `start` (the
    /// same errors `readEscaped` gives). Called only after `escapedEnd` found no terminator, so
    /// `00 00` cannot occur here: the `00` followed by something other than `FF` that it reports
    /// is always damage. The two loops must agree on what ends a string.
    @inline(never)
    private func escapedFailure(from start: Int, total: Int, reading: String) -> OrderedKeyError {
        withBuffer { buffer in
            var index = start
            while index < total {
                if buffer[index] != 0 {
                    index += 1
                    continue
                }
                guard index + 1 < total else { break }
                guard buffer[index + 1] == 0xFF else {
                    assert(buffer[index + 1] != 0, "escapedEnd missed a terminator")
                    return .invalid(offset: index, reading: reading, reason: "0x00 must be followed by 0x00 (end) or 0xFF (escaped zero)")
                }
                index += 2
            }
            return .truncated(offset: start, needed: total - start + 1, available: total - start,
                              reading: "\(reading) (missing 0x00 0x00 terminator)")
        }
    }

    /// Reads one nested key of type `Key`.
    @inlinable public mutating func read<Key: OrderedKey>(_: Key.Type) throws -> Key {
        try Key.decodeOrderedKey(from: &self)
    }

    /// Throws unless every byte has been consumed.
    @inlinable public func expectEnd() throws(OrderedKeyError) {
        guard isAtEnd else { throw .trailingBytes(offset: position, count: remainingCount) }
    }

    /// Builds an `.invalid` error positioned at `offset` (for conformers' validation).
    public func invalid(_ reason: String, reading: String, at position: Int? = nil) -> OrderedKeyError {
        .invalid(offset: position ?? offset, reading: reading, reason: reason)
    }
}
