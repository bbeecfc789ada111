/// `Optional` keys: `nil` is the single byte `0x00`; a value is `0x01` followed by the
/// wrapped encoding. Hence `nil` sorts before every value, and the encoding stays prefix-free.
///
/// `Optional` is not `Comparable`, and Strata does not make it so (a public retroactive
/// conformance would change `<` for every importer): ranges over an optional index value are
/// spelled with `IndexRange` (`IndexRange(lower: .including(nil), upper: .excluding(5))`).
extension Optional: OrderedKey where Wrapped: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        switch self {
        case .none:
            writer.writeByte(0)
        case .some(let wrapped):
            writer.writeByte(1)
            wrapped.encodeOrderedKey(into: &writer)
        }
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Wrapped? {
        let start = reader.offset
        switch try reader.readByte(reading: "Optional tag") {
        case 0: return nil
        case 1: return try Wrapped.decodeOrderedKey(from: &reader)
        case let other:
            throw reader.invalid("tag \(other) is neither 0 (nil) nor 1 (value)", reading: "Optional", at: start)
        }
    }
}
