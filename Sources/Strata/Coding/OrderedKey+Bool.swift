/// `Bool` is not `Comparable` in the standard library, but `OrderedKey` requires it (a
/// flag is a common leading index component, e.g. `(isArchived, createdAt)`). Strata adds
/// the one sensible order, `false < true`, retroactively; if the standard library ever adds
/// its own conformance this one must be removed (the compiler will report the duplicate).
extension Bool: @retroactive Comparable {
    public static func < (lhs: Bool, rhs: Bool) -> Bool { !lhs && rhs }
}

/// One byte, `0x00` for `false` and `0x01` for `true`. Any other byte is rejected on decode
/// so that every accepted key is canonical.
extension Bool: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        writer.writeByte(self ? 1 : 0)
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Bool {
        let start = reader.offset
        switch try reader.readByte(reading: "Bool") {
        case 0: return false
        case 1: return true
        case let other: throw reader.invalid("byte \(other) is neither 0 nor 1", reading: "Bool", at: start)
        }
    }
}
