/// Why a byte string could not be decoded as an ordered key.
///
/// Offsets are relative to the start of the reader's bytes so a corrupt page entry can be
/// located when debugging.
public enum OrderedKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes ended before a complete encoding was read.
    case truncated(offset: Int, needed: Int, available: Int, reading: String)
    /// The bytes are present but are not a valid (canonical) encoding of the type.
    case invalid(offset: Int, reading: String, reason: String)
    /// A complete value was decoded but bytes were left over.
    case trailingBytes(offset: Int, count: Int)

    public var description: String {
        switch self {
        case let .truncated(offset, needed, available, reading):
            return "OrderedKey: truncated \(reading) at byte \(offset): needed \(needed) byte(s), only \(available) left"
        case let .invalid(offset, reading, reason):
            return "OrderedKey: invalid \(reading) at byte \(offset): \(reason)"
        case let .trailingBytes(offset, count):
            return "OrderedKey: \(count) unexpected trailing byte(s) after the key, starting at byte \(offset)"
        }
    }
}
