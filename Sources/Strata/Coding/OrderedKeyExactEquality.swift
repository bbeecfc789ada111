import Foundation

/// Key types whose `==` is known to agree with their ordered keys (equal values, identical
/// bytes), so an update may compare an index's old and new values instead of encoding both.
///
/// Only the library's own key types conform. The canonical-form rule of `OrderedKey` asks the
/// same of every key type, but nothing can check a user's type, and a looser `==` (say, a
/// case-insensitive tag that encodes its text as typed) would then leave an index entry under
/// the old bytes: a silent wrong answer. Every other key type is compared by its encoded bytes.
protocol OrderedKeyExactEquality: OrderedKey {
    /// Whether `self` and `other` have identical ordered keys, told without encoding them where
    /// `==` is known to decide it.
    func hasSameOrderedKey(as other: Self) -> Bool
}

extension OrderedKeyExactEquality {
    func hasSameOrderedKey(as other: Self) -> Bool { self == other }
}

extension Bool: OrderedKeyExactEquality {}
extension Int: OrderedKeyExactEquality {}
extension Int8: OrderedKeyExactEquality {}
extension Int16: OrderedKeyExactEquality {}
extension Int32: OrderedKeyExactEquality {}
extension Int64: OrderedKeyExactEquality {}
extension UInt: OrderedKeyExactEquality {}
extension UInt8: OrderedKeyExactEquality {}
extension UInt16: OrderedKeyExactEquality {}
extension UInt32: OrderedKeyExactEquality {}
extension UInt64: OrderedKeyExactEquality {}
extension UUID: OrderedKeyExactEquality {}
/// `-0.0 == 0.0`, and both encode as `0.0`; NaN is never `==`, so it is always encoded.
extension Double: OrderedKeyExactEquality {}
extension Float: OrderedKeyExactEquality {}
/// `==` compares the `timeIntervalSinceReferenceDate` the key encodes.
extension Date: OrderedKeyExactEquality {}

extension String: OrderedKeyExactEquality {
    /// `==` is canonical equivalence by the standard library's Unicode tables, the key's
    /// normalization uses Foundation's: they agree for certain only on strings that are in NFC by
    /// construction (no scalar from U+0300 on), where equivalent means identical. Others are
    /// compared by their keys.
    func hasSameOrderedKey(as other: String) -> Bool {
        if OrderedStringNormalization.isTriviallyNFC(self), OrderedStringNormalization.isTriviallyNFC(other) { return self == other }
        return orderedKeyBytes == other.orderedKeyBytes
    }
}

extension Optional: OrderedKeyExactEquality where Wrapped: OrderedKeyExactEquality {
    func hasSameOrderedKey(as other: Wrapped?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case let (first?, second?): first.hasSameOrderedKey(as: second)
        default: false
        }
    }
}

extension SingleValueIndex {
    /// How an update tells that the property's value is unchanged without encoding it, for key types
    /// whose `==` is known to agree with their keys (nil for others: they are compared encoded).
    @usableFromInline
    static func sameOrderedKey<Instance, Value: OrderedKey>(_ property: PropertyReader<Instance, Value>) -> ((Instance, Instance) -> Bool)? {
        guard let exact = Value.self as? any OrderedKeyExactEquality.Type else { return nil }
        func comparison<Exact: OrderedKeyExactEquality>(_: Exact.Type) -> ((Instance, Instance) -> Bool)? {
            guard let property = property as? PropertyReader<Instance, Exact> else { return nil }
            return { first, second in property.read(first).hasSameOrderedKey(as: property.read(second)) }
        }
        return comparison(exact)
    }
}
