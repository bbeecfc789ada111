/// One end of a range over index values or identifiers.
public enum IndexBound<Value: Sendable>: Sendable {
    /// No bound: the range is open at this end.
    case unbounded
    /// The range includes this value.
    case including(Value)
    /// The range stops short of this value (for a lower bound: starts after it).
    case excluding(Value)
}

/// A range usable in loads: Swift's `a..<b`, `a...b`, `a...`, `..<b`, `...b`, or `IndexRange`.
public protocol IndexRangeExpression<Bound>: Sendable {
    associatedtype Bound: OrderedKey
    /// Where the range starts.
    var lowerIndexBound: IndexBound<Bound> { get }
    /// Where the range ends.
    var upperIndexBound: IndexBound<Bound> { get }
}

/// An explicit range, for the combinations Swift's range operators cannot spell (an excluded
/// lower bound) or for one exact value.
public struct IndexRange<Bound: OrderedKey>: IndexRangeExpression {
    /// Where the range starts: unbounded, or at a value included or excluded.
    public let lowerIndexBound: IndexBound<Bound>
    /// Where the range ends: unbounded, or at a value included or excluded.
    public let upperIndexBound: IndexBound<Bound>

    /// A range from `lower` to `upper`; both default to unbounded.
    /// ```swift
    /// let afterB = IndexRange<String>(lower: .excluding("b"))   // every value > "b"
    /// ```
    public init(lower: IndexBound<Bound> = .unbounded, upper: IndexBound<Bound> = .unbounded) {
        lowerIndexBound = lower
        upperIndexBound = upper
    }

    /// The range holding exactly `value` (both ends included).
    public static func only(_ value: Bound) -> IndexRange { IndexRange(lower: .including(value), upper: .including(value)) }
}

extension Range: IndexRangeExpression where Bound: OrderedKey {
    public var lowerIndexBound: IndexBound<Bound> { .including(lowerBound) }
    public var upperIndexBound: IndexBound<Bound> { .excluding(upperBound) }
}

extension ClosedRange: IndexRangeExpression where Bound: OrderedKey {
    public var lowerIndexBound: IndexBound<Bound> { .including(lowerBound) }
    public var upperIndexBound: IndexBound<Bound> { .including(upperBound) }
}

extension PartialRangeFrom: IndexRangeExpression where Bound: OrderedKey {
    public var lowerIndexBound: IndexBound<Bound> { .including(lowerBound) }
    public var upperIndexBound: IndexBound<Bound> { .unbounded }
}

extension PartialRangeUpTo: IndexRangeExpression where Bound: OrderedKey {
    public var lowerIndexBound: IndexBound<Bound> { .unbounded }
    public var upperIndexBound: IndexBound<Bound> { .excluding(upperBound) }
}

extension PartialRangeThrough: IndexRangeExpression where Bound: OrderedKey {
    public var lowerIndexBound: IndexBound<Bound> { .unbounded }
    public var upperIndexBound: IndexBound<Bound> { .including(upperBound) }
}

/// Result order of range loads.
public enum RangeOrder: Sendable {
    /// Smallest key first.
    case ascending
    /// Largest key first.
    case descending
}

/// A range turned into tree keys: scan `lower ..< upper` (nil = open end).
struct KeyRange {
    var lower: [UInt8]?
    var upper: [UInt8]?

    /// The keys that start with `prefix` (the leading parts of a composite key; empty: none)
    /// and continue with a value in `range`.
    init<Bound: OrderedKey>(_ range: some IndexRangeExpression<Bound>, after prefix: [UInt8] = []) {
        switch range.lowerIndexBound {
        case .unbounded: lower = prefix.isEmpty ? nil : prefix
        case .including(let value): lower = prefix + value.orderedKeyBytes
        // Past every key that starts with the value's bytes.
        case .excluding(let value): lower = OrderedKeyWriter.prefixUpperBound(of: prefix + value.orderedKeyBytes) ?? [0xFF, 0xFF, 0xFF, 0xFF]
        }
        switch range.upperIndexBound {
        case .unbounded: upper = prefix.isEmpty ? nil : OrderedKeyWriter.prefixUpperBound(of: prefix)
        case .including(let value): upper = OrderedKeyWriter.prefixUpperBound(of: prefix + value.orderedKeyBytes)
        case .excluding(let value): upper = prefix + value.orderedKeyBytes
        }
    }

    init(lower: [UInt8]?, upper: [UInt8]?) {
        self.lower = lower
        self.upper = upper
    }

    static let everything = KeyRange(lower: nil, upper: nil)

    /// Every key starting with `prefix`.
    static func prefixed(_ prefix: [UInt8]) -> KeyRange {
        KeyRange(lower: prefix, upper: OrderedKeyWriter.prefixUpperBound(of: prefix))
    }

    var isEmpty: Bool {
        guard let lower, let upper else { return false }
        return !lower.lexicographicallyPrecedes(upper)
    }
}
