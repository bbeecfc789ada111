import Foundation
import Strata

/// Appending the fixed-width parts of entity keys and values (identifiers, datestamps, sequence
/// numbers, lengths) to a byte array, for the write paths that build several keys per property
/// change. Each part is copied as typed bytes (`UnsafeBufferPointer<UInt8>`), which the array
/// appends with one copy; appending a raw buffer instead went byte by byte (about a hundred
/// instructions for eight bytes), several times per key.
///
/// Datestamps are written exactly as `OrderedKeyWriter.write(_: Date)` writes them (a test
/// checks the two agree for ordinary, negative, zero, infinite and NaN datestamps).
extension Array where Element == UInt8 {
    /// Appends the bytes of `raw`.
    @inline(__always)
    mutating func appendBytes(_ raw: UnsafeRawBufferPointer) {
        raw.withMemoryRebound(to: UInt8.self) { append(contentsOf: $0) }
    }

    /// Appends the bytes of `other`.
    @inline(__always)
    mutating func appendBytes(_ other: [UInt8]) {
        other.withUnsafeBufferPointer { append(contentsOf: $0) }
    }

    /// Appends the 16 bytes of an entity identifier.
    @inline(__always)
    mutating func appendID(_ id: EntityID) {
        Swift.withUnsafeBytes(of: id.uuid) { appendBytes($0) }
    }

    /// Appends `value` big-endian.
    @inline(__always)
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { appendBytes($0) }
    }

    /// Appends `date` in its ordered form (`OrderedKeyWriter.write(_: Date)`: the ordered
    /// bits of its `timeIntervalSinceReferenceDate`, -0.0 as 0.0 and every NaN as `.nan`).
    @inline(__always)
    mutating func appendOrderedDate(_ date: Date) {
        appendBigEndian(EntityFixedWidth.orderedBits(of: date))
    }
}

/// Reading the fixed-width parts `EntityKeyBytes` writes, in place, for the read paths that decode
/// one per entry (history entries, current entries). Each accepts exactly what the ordered-key
/// reader accepts for the same bytes (a test checks them against it).
enum EntityFixedWidth {
    /// The ordered form of `date` as a number (stored big-endian): the bits of its
    /// `timeIntervalSinceReferenceDate`, -0.0 as 0.0 and every NaN as `.nan`, with the sign bit
    /// flipped for positive values and every bit for negative ones, so the bytes sort as the dates.
    @inline(__always)
    static func orderedBits(of date: Date) -> UInt64 {
        let interval = date.timeIntervalSinceReferenceDate
        let canonical: Double = interval.isNaN ? .nan : (interval == 0 ? 0 : interval)
        let bits = canonical.bitPattern
        let signBit: UInt64 = 1 << 63
        return bits & signBit != 0 ? ~bits : bits | signBit
    }

    /// The datestamp in ordered form at `offset` of `raw` (8 bytes, checked by the caller).
    /// - Throws: `EntityError.corrupt` for a NaN other than `.nan` or a -0.0, which no writer produces.
    @inline(__always)
    static func orderedDate(_ raw: UnsafeRawBufferPointer, at offset: Int) throws -> Date {
        guard let value = orderedDouble(raw, at: offset) else {
            throw EntityError.corrupt(reason: "datestamp with a non-canonical NaN or -0.0")
        }
        return Date(timeIntervalSinceReferenceDate: value)
    }

    /// The double in ordered form (Strata's `OrderedKey` encoding of a `Double`) at `offset` of
    /// `raw` (8 bytes, checked by the caller), or nil for a NaN other than `.nan` or a -0.0,
    /// which no writer produces.
    @inline(__always)
    static func orderedDouble(_ raw: UnsafeRawBufferPointer, at offset: Int) -> Double? {
        let ordered = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        let signBit: UInt64 = 1 << 63
        let value = Double(bitPattern: ordered & signBit != 0 ? ordered ^ signBit : ~ordered)
        guard !value.isNaN || value.bitPattern == Double.nan.bitPattern, !(value == 0 && value.sign == .minus) else { return nil }
        return value
    }

    /// The integer in ordered form (a 64-bit two's complement number with its sign bit flipped,
    /// big-endian) at `offset` of `raw` (8 bytes, checked by the caller).
    @inline(__always)
    static func orderedInt(_ raw: UnsafeRawBufferPointer, at offset: Int) -> Int {
        let ordered = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        return Int(Int64(bitPattern: ordered ^ (1 << 63)))
    }
}
