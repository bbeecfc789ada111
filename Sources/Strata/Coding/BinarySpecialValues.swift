import Foundation

/// Compact forms for Foundation types whose own `Codable` output would be large or slow:
///
/// - `Date`: 8-byte little-endian `timeIntervalSinceReferenceDate` (bit-exact). This is also
///   exactly what `Date`'s own `Codable` produces here, so both paths agree.
/// - `UUID`: its 16 raw bytes (its own `Codable` writes a 36-character string).
/// - `Data`: varint byte count + raw bytes (its own `Codable` writes one slot per byte).
///
/// Detection is by the *static* type `T` at the generic `encode`/`decode` entry points, and
/// the types are identical there, so the `unsafeBitCast`s below are plain copies.
/// If an encoder ever bypassed the entry points (calling `value.encode(to:)` directly), the
/// decoder still recognises the `Codable` forms of `UUID` and `Data` by their shape and
/// falls back to `Codable` for them.
enum BinarySpecialValues {
    static func appendIfSpecial<T: Encodable>(_ value: T, to buffer: inout BinaryOutputBuffer) -> Bool {
        if T.self == Date.self {
            let date = unsafeBitCast(value, to: Date.self)
            buffer.appendLittleEndian(date.timeIntervalSinceReferenceDate.bitPattern)
            return true
        }
        if T.self == UUID.self {
            let uuid = unsafeBitCast(value, to: UUID.self)
            withUnsafeBytes(of: uuid.uuid) { buffer.append($0) }
            return true
        }
        if T.self == Data.self {
            let data = unsafeBitCast(value, to: Data.self)
            BinaryVarint.append(UInt64(data.count), to: &buffer)
            data.withUnsafeBytes { buffer.append($0) }
            return true
        }
        return false
    }

    static func isSpecial<T>(_: T.Type) -> Bool {
        T.self == Date.self || T.self == UUID.self || T.self == Data.self
    }

    /// Decodes a type for which `isSpecial(T.self)` is true; `decoder` makes a decoder over
    /// the same bytes, only needed for errors and for the `Codable`-form fallback.
    ///
    /// Returns `T` rather than `T?`: this runs unspecialized, and an `Optional<T>` would
    /// cost a runtime metadata lookup per field.
    static func decodeSpecial<T: Decodable>(
        _: T.Type, from bytes: UnsafeRawBufferPointer, decoder: () throws -> BinaryValueDecoder
    ) throws -> T {
        guard !bytes.isEmpty else {
            throw DecodingError.valueNotFound(T.self, DecodingError.Context(
                codingPath: try decoder().codingPath, debugDescription: "Expected \(T.self) but found nil"))
        }
        if T.self == Date.self {
            do {
                return unsafeBitCast(try decodeDate(bytes), to: T.self)
            } catch {
                throw error.decodingError(codingPath: try decoder().codingPath)
            }
        }
        if T.self == UUID.self, let uuid = decodeRawUUID(bytes, bitCast: uuidIsItsBytes) {
            return unsafeBitCast(uuid, to: T.self)
        }
        if T.self == Data.self, let data = decodeRawData(bytes) {
            return unsafeBitCast(data, to: T.self)
        }
        // Not the compact form: the value was written through the type's own Codable.
        return try T(from: try decoder())
    }

    /// The compact form of a `Date` or `UUID` (the special values records hold most) read in
    /// place, when `T` is one of them and `bytes` has that form's exact size; otherwise `nil`
    /// and the caller takes the general path (`decodeSpecial`), which also reports errors.
    /// Non-generic and inlined: the caller tests `T.self` first, so no `Optional<T>` metadata
    /// is needed in unspecialized code.
    /// `bitCast`: `uuidIsItsBytes`, which the caller read once (`BinaryDecodingShortcuts`).
    @inline(__always)
    static func compactUUID(_ bytes: UnsafeRawBufferPointer, bitCast: Bool) -> UUID? { decodeRawUUID(bytes, bitCast: bitCast) }

    /// See `compactUUID(_:bitCast:)`.
    @inline(__always)
    static func compactDate(_ bytes: UnsafeRawBufferPointer) -> Date? {
        guard bytes.count == 8 else { return nil }
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))))
    }

    private static func decodeDate(_ extent: UnsafeRawBufferPointer) throws(BinaryFormatError) -> Date {
        let bits = try BinaryFixedWidth.readLittleEndian(UInt64.self, from: extent, what: "Date")
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }

    /// The compact form is exactly 16 bytes; the Codable form (a 36-character string) is 37.
    @inline(__always)
    private static func decodeRawUUID(_ extent: UnsafeRawBufferPointer, bitCast: Bool) -> UUID? {
        guard extent.count == 16, let base = extent.baseAddress else { return nil }
        let words = (base.loadUnaligned(as: UInt64.self), base.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        if bitCast { return unsafeBitCast(words, to: UUID.self) }
        return UUID(uuid: unsafeBitCast(words, to: uuid_t.self))
    }

    /// Whether a `UUID` value is exactly its 16 bytes in order, as `uuid_t` is: then a field
    /// is read with two loads, where `UUID(uuid:)` is a call into Foundation (about a tenth of
    /// decoding a UUID field). Checked once per process against `UUID(uuid:)`; if the layout
    /// ever differs, the initializer is used.
    static let uuidIsItsBytes: Bool = {
        guard MemoryLayout<UUID>.size == 16, MemoryLayout<(UInt64, UInt64)>.size == 16 else { return false }
        let sample: uuid_t = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0, 0x0F, 0xA5, 0x5A)
        let built = unsafeBitCast(sample, to: UUID.self)
        let expected = UUID(uuid: sample)
        return built == expected && built.uuidString == expected.uuidString
            && withUnsafeBytes(of: built.uuid) { Array($0) } == withUnsafeBytes(of: sample) { Array($0) }
    }()

    /// The compact form is `varint n` followed by exactly n bytes; the Codable form (an
    /// unkeyed container of n one-byte slots, each at least 2 bytes) can only match when
    /// n == 0, where both mean empty data.
    private static func decodeRawData(_ extent: UnsafeRawBufferPointer) -> Data? {
        var offset = 0
        guard let count = try? BinaryVarint.read(from: extent, at: &offset),
              count == UInt64(extent.count - offset) else { return nil }
        return Data(UnsafeRawBufferPointer(rebasing: extent[offset...]))
    }
}
