import Foundation

/// Writes the parts of one key or entry (bytes, identifiers, datestamps, big-endian numbers)
/// one after the other into memory the caller sized, for `Array.appendParts`: a write path
/// appends each history key, header entry and index key of a property change as one piece
/// instead of part by part. Why: every `append(contentsOf:)` of a part (a call of the generic
/// append, its uniqueness and capacity checks) cost about 150 instructions, five or six per key.
/// Writes exactly the bytes `EntityKeyBytes`' appends write (a test checks they agree).
struct EntityByteCursor {
    private var next: UnsafeMutableRawPointer
    private let end: UnsafeMutableRawPointer

    /// - Precondition: `buffer` is not empty (`appendParts` checks it).
    init(_ buffer: UnsafeMutableRawBufferPointer) {
        next = buffer.baseAddress!
        end = next + buffer.count
    }

    /// The bytes left to write.
    var remaining: Int { end - next }

    @inline(__always)
    mutating func write(_ raw: UnsafeRawBufferPointer) {
        precondition(raw.count <= remaining, "EntityByteCursor: more bytes than sized")
        if raw.count > 0 { next.copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
        next += raw.count
    }

    @inline(__always)
    mutating func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0) } }

    @inline(__always)
    mutating func writeByte(_ byte: UInt8) { Swift.withUnsafeBytes(of: byte) { write($0) } }

    @inline(__always)
    mutating func writeBigEndian<T: FixedWidthInteger>(_ value: T) { Swift.withUnsafeBytes(of: value.bigEndian) { write($0) } }

    /// The 16 bytes of an entity identifier.
    @inline(__always)
    mutating func writeID(_ id: EntityID) { Swift.withUnsafeBytes(of: id.uuid) { write($0) } }

    /// `date` in its ordered form (see `Array.appendOrderedDate`).
    @inline(__always)
    mutating func writeOrderedDate(_ date: Date) { writeBigEndian(EntityFixedWidth.orderedBits(of: date)) }
}

extension Array where Element == UInt8 {
    /// Appends `count` bytes that `write` writes through a cursor, in one growth and one copy.
    /// - Precondition: `count > 0` (an empty allocation may have no address for the cursor;
    ///   every caller writes at least a key), and `write` writes exactly `count` bytes.
    @inline(__always)
    mutating func appendParts(count: Int, _ write: (inout EntityByteCursor) -> Void) {
        precondition(count > 0, "appendParts: nothing to append")
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
            var cursor = EntityByteCursor(buffer)
            write(&cursor)
            precondition(cursor.remaining == 0, "appendParts: fewer bytes than sized")
            appendBytes(UnsafeRawBufferPointer(buffer))
        }
    }
}
