import Strata
import Testing

/// -1, 0 or 1, like the sign of `memcmp` extended to unequal lengths (a prefix sorts first).
func byteOrderSign(_ lhs: [UInt8], _ rhs: [UInt8]) -> Int {
    if lhs == rhs { return 0 }
    return lhs.lexicographicallyPrecedes(rhs) ? -1 : 1
}

func comparableSign<T: Comparable>(_ lhs: T, _ rhs: T) -> Int {
    lhs < rhs ? -1 : (rhs < lhs ? 1 : 0)
}

/// The intended order of optional keys: `nil` first, then the wrapped values by `<` (Strata
/// does not make `Optional` `Comparable`).
func optionalSign<T: Comparable>(_ lhs: T?, _ rhs: T?) -> Int {
    switch (lhs, rhs) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case let (left?, right?): return comparableSign(left, right)
    }
}

/// `expectOrderPreserved` with `<` as the order.
func expectOrderPreserved<T: OrderedKey & Comparable>(_ values: [T], isEqual: (T, T) -> Bool = { $0 == $1 },
                                                      sourceLocation: SourceLocation = #_sourceLocation) {
    expectOrderPreserved(values, compare: comparableSign, isEqual: isEqual, sourceLocation: sourceLocation)
}

/// Checks the `OrderedKey` contract on every pair of `values`:
/// sign(compare(a, b)) == sign(memcmp(enc(a), enc(b))), plus exact round trips through both
/// reader kinds. `isEqual` decides round-trip equality.
func expectOrderPreserved<T: OrderedKey>(
    _ values: [T],
    compare: (T, T) -> Int,
    isEqual: (T, T) -> Bool = { $0 == $1 },
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let encodings = values.map(\.orderedKeyBytes)
    var failures: [String] = []
    for (value, encoding) in zip(values, encodings) {
        do {
            let decoded = try T(orderedKeyBytes: encoding)
            if !isEqual(decoded, value) { failures.append("round trip of \(value) gave \(decoded)") }
            var reader = OrderedKeyReader(encoding)
            let viaArrayReader = try T.decodeOrderedKey(from: &reader)
            if !isEqual(viaArrayReader, value) || !reader.isAtEnd {
                failures.append("array reader round trip of \(value) gave \(viaArrayReader)")
            }
        } catch {
            failures.append("decoding \(value) threw \(error)")
        }
    }
    for i in values.indices {
        for j in values.indices {
            let expected = compare(values[i], values[j])
            let actual = byteOrderSign(encodings[i], encodings[j])
            if expected != actual {
                failures.append("compare(\(values[i]), \(values[j])) = \(expected) but byte order = \(actual): \(encodings[i]) vs \(encodings[j])")
            }
        }
        if failures.count > 20 { break }
    }
    #expect(failures.isEmpty, "\(failures.count) failure(s), first: \(failures.prefix(5).joined(separator: "\n"))",
            sourceLocation: sourceLocation)
}

/// Every strict prefix of a valid encoding must be rejected with a thrown error.
func expectTruncationsThrow<T: OrderedKey>(_ value: T, as type: T.Type, sourceLocation: SourceLocation = #_sourceLocation) {
    let encoding = value.orderedKeyBytes
    for length in 0..<encoding.count {
        #expect(throws: OrderedKeyError.self, "prefix of length \(length) of \(encoding)", sourceLocation: sourceLocation) {
            _ = try T(orderedKeyBytes: Array(encoding.prefix(length)))
        }
    }
}
