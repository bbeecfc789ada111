/// `Optional` keys: `nil` is the single byte `0x00`; a value is `0x01` followed by the
/// wrapped encoding. Hence `nil` sorts before every value, and the encoding stays prefix-free.
///
/// `Optional` is not `Comparable` in the standard library, and `OrderedKey` requires it, so
/// Strata adds a *retroactive* conditional conformance, deliberately narrowed to
/// `Wrapped: OrderedKey` (not every `Comparable`) to limit its reach. Its order — `nil`
/// first, then wrapped values by their own `<` — is the one the encoding produces.
/// Caveat of any retroactive conformance: if the standard library ever adds its own, this one
/// must be removed (the compiler will then report the duplicate).
extension Optional: @retroactive Comparable where Wrapped: OrderedKey {
    public static func < (lhs: Wrapped?, rhs: Wrapped?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil), (.some, nil): return false
        case (nil, .some): return true
        case let (.some(left), .some(right)): return left < right
        }
    }
}

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
