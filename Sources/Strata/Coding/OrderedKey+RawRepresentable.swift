/// Lets enums (and other raw-value types) become keys with a one-line declaration:
///
///     enum Genre: String { case jazz, blues }
///     extension Genre: OrderedKey, Comparable {}   // Comparable: for range operators in queries
///
/// The key is the raw value's key, and `<` is provided here as raw-value order so that it
/// agrees with the bytes. Do not also give the type a different `<` (for example the
/// case-declaration order synthesized for `Comparable` enums): the index would then disagree
/// with `<`. Decoding throws if the stored raw value no longer names a case.
extension OrderedKey where Self: RawRepresentable, RawValue: OrderedKey & Comparable {
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

extension OrderedKey where Self: RawRepresentable, RawValue: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        rawValue.encodeOrderedKey(into: &writer)
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Self {
        let start = reader.offset
        let raw = try RawValue.decodeOrderedKey(from: &reader)
        guard let value = Self(rawValue: raw) else {
            throw reader.invalid("raw value \(raw) matches no \(Self.self)", reading: "\(Self.self)", at: start)
        }
        return value
    }
}
