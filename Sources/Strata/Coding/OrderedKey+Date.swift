import Foundation

/// Dates encode as their `timeIntervalSinceReferenceDate` in ordered `Double` form (8 bytes),
/// which is exactly what `Date`'s `==` and `<` compare, so dates before 1970/2001 and
/// `distantPast`/`distantFuture` all sort correctly. Sub-nanosecond precision is preserved
/// because the stored `Double` is the `Date`'s whole state.
extension Date: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        timeIntervalSinceReferenceDate.encodeOrderedKey(into: &writer)
    }

    @inlinable public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Date {
        Date(timeIntervalSinceReferenceDate: try Double.decodeOrderedKey(from: &reader))
    }
}
