/// `Bool` is not `Comparable` in the standard library, and Strata does not make it so (a public
/// retroactive conformance would change every importer's code). Its key order is `false` before
/// `true`, which is what a flag as a leading composite component (`(isArchived, createdAt)`) needs.
/// One byte, `0x00` for `false` and `0x01` for `true`. Any other byte is rejected on decode
/// so that every accepted key is canonical.
extension Bool: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        writer.writeByte(self ? 1 : 0)
    }

    @inlinable public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Bool {
        let start = reader.offset
        switch try reader.readByte(reading: "Bool") {
        case 0: return false
        case 1: return true
        case let other: throw reader.invalid("byte \(other) is neither 0 nor 1", reading: "Bool", at: start)
        }
    }
}
