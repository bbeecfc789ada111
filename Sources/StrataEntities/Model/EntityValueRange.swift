/// A range of property values for queries (`EntityReadContext.entities(where:in:)`), in
/// `EntityValue`'s order. Build it from a Swift range: `EntityValueRange(30..<40)`,
/// `EntityValueRange("A"...)`, or use `EntityValueRange(equalTo:)`.
public struct EntityValueRange: Hashable, Sendable {
    /// Inclusive lower bound; nil: unbounded.
    public var lower: EntityValue?
    /// Upper bound (inclusive when `upperInclusive`); nil: unbounded.
    public var upper: EntityValue?
    /// Whether `upper` itself is in the range.
    public var upperInclusive: Bool

    /// A range from `lower` (inclusive) to `upper`; a nil bound is unbounded.
    public init(lower: EntityValue?, upper: EntityValue?, upperInclusive: Bool) {
        self.lower = lower
        self.upper = upper
        self.upperInclusive = upperInclusive
    }

    /// The range holding exactly `value` (under `EntityValue`'s equality: `.int(1)` does not match `.double(1)`).
    public init(equalTo value: EntityValue) { self.init(lower: value, upper: value, upperInclusive: true) }
    /// `lower..<upper`.
    public init(_ range: Range<EntityValue>) { self.init(lower: range.lowerBound, upper: range.upperBound, upperInclusive: false) }
    /// `lower...upper`.
    public init(_ range: ClosedRange<EntityValue>) { self.init(lower: range.lowerBound, upper: range.upperBound, upperInclusive: true) }
    /// `lower...`: every value from `lower` up.
    public init(_ range: PartialRangeFrom<EntityValue>) { self.init(lower: range.lowerBound, upper: nil, upperInclusive: false) }
    /// `..<upper`.
    public init(_ range: PartialRangeUpTo<EntityValue>) { self.init(lower: nil, upper: range.upperBound, upperInclusive: false) }
    /// `...upper`.
    public init(_ range: PartialRangeThrough<EntityValue>) { self.init(lower: nil, upper: range.upperBound, upperInclusive: true) }

    /// Whether `value` lies in the range.
    public func contains(_ value: EntityValue) -> Bool {
        if let lower, value < lower { return false }
        if let upper { return upperInclusive ? value <= upper : value < upper }
        return true
    }
}
