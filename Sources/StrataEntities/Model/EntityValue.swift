import Foundation

/// The value of a property: one of a fixed set of kinds, arrays of them, or a relationship (a
/// reference to another entity by its identifier).
///
/// Literals work where a value is expected: `["name": "Ada", "born": 1815, "tags": ["math"]]`.
///
/// Values are ordered first by kind (bool < int < double < date < string < data < uuid <
/// entity < array), then by the kind's own order (numbers numerically, strings by the UTF-8
/// bytes of their NFC form, arrays element by element). This is the order of the value index,
/// so range queries are exact for every kind; a range whose bounds are of one kind matches
/// only values of that kind. Equality is the same: equal encodings.
public enum EntityValue: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// A Boolean (`false` < `true`).
    case bool(Bool)
    /// A signed integer; never equal to a `.double` of the same number.
    case int(Int)
    /// A floating-point number (equality is by encoding: NaN equals NaN, and -0.0 equals 0.0 and is stored as 0.0).
    case double(Double)
    /// A point in time.
    case date(Date)
    /// Text, compared by the UTF-8 bytes of its NFC form.
    case string(String)
    /// Raw bytes.
    case data(Data)
    /// A UUID that is a value, not a relationship (for that, see `entity`).
    case uuid(UUID)
    /// A relationship: the entity with this identifier.
    case entity(EntityID)
    /// An ordered list of values (ordered element by element).
    case array([EntityValue])

    /// The kind's name, as errors and the interchange format spell it.
    public var kindName: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .date: "date"
        case .string: "string"
        case .data: "data"
        case .uuid: "uuid"
        case .entity: "entity"
        case .array: "array"
        }
    }

    /// Every entity this value refers to (itself, or the entity elements of an array).
    public var referencedEntities: [EntityID] {
        switch self {
        case .entity(let id): [id]
        case .array(let elements): elements.flatMap(\.referencedEntities)
        default: []
        }
    }

    /// Equality is the index's: equal encodings. So `.double(.nan) == .double(.nan)` (a stored
    /// NaN is found again), `.double(-0.0) == .double(0.0)` (the encoding writes -0.0 as 0.0),
    /// and `.int(1) != .double(1)`.
    ///
    /// Compared without building the encodings (dictionaries keyed by references compare keys on
    /// every probe, and two encodings cost two allocations): values of different kinds have
    /// different tags; within a kind, each comparison below holds exactly when the encodings are
    /// equal (a string's encoding is its NFC form, which `String`'s `==` compares; a double's
    /// encoding writes -0.0 as 0.0 and every NaN as one NaN; an array's is its elements' in order).
    public static func == (lhs: EntityValue, rhs: EntityValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): sameEncoding(a, b)
        case (.date(let a), .date(let b)): sameEncoding(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
        case (.string(let a), .string(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.entity(let a), .entity(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        default: false
        }
    }

    /// Whether two doubles have the same ordered encoding (-0.0 is 0.0, NaNs are one NaN).
    private static func sameEncoding(_ a: Double, _ b: Double) -> Bool { a == b || (a.isNaN && b.isNaN) }

    /// Consistent with `==` (equal encodings): the common kinds hash what their encoding is a
    /// function of without building it (a string's encoding is its NFC form, which `String`'s
    /// own hash follows); the others hash the encoding.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .bool(let value): hasher.combine(EntityValueCoding.boolTag); hasher.combine(value)
        case .int(let value): hasher.combine(EntityValueCoding.intTag); hasher.combine(value)
        case .string(let value): hasher.combine(EntityValueCoding.stringTag); hasher.combine(value)
        case .uuid(let value): hasher.combine(EntityValueCoding.uuidTag); hasher.combine(value)
        case .entity(let id): hasher.combine(EntityValueCoding.entityTag); hasher.combine(id)
        case .double, .date, .data, .array: hasher.combine(orderedBytes)
        }
    }

    /// The value index's order: by kind first, then within the kind (see the type's documentation).
    public static func < (lhs: EntityValue, rhs: EntityValue) -> Bool {
        lhs.orderedBytes.lexicographicallyPrecedes(rhs.orderedBytes)
    }

    /// A short form for display: strings quoted, data as its byte count, a relationship as `->` and the id.
    public var description: String {
        switch self {
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .date(let value): "\(value)"
        case .string(let value): "\"\(value)\""
        case .data(let value): "<\(value.count) bytes>"
        case .uuid(let value): value.uuidString
        case .entity(let id): "->\(id)"
        case .array(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

extension EntityValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
                       ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral {
    /// `"text"` is `.string("text")`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `42` is `.int(42)`.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// `1.5` is `.double(1.5)`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `true` is `.bool(true)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `["a", 1]` is `.array([.string("a"), .int(1)])`.
    public init(arrayLiteral elements: EntityValue...) { self = .array(elements) }
}

/// A Swift type stored as one kind of `EntityValue`: what typed reads (`EntityRecord.value(_:as:)`)
/// convert to, throwing `EntityError.wrongValueType` when the stored kind differs.
public protocol EntityValueConvertible: Sendable {
    /// The value as stored.
    var entityValue: EntityValue { get }
    /// nil when `value` is of another kind.
    init?(entityValue value: EntityValue)
    /// The kind name used in errors.
    static var entityKindName: String { get }
}

extension Bool: EntityValueConvertible {
    public var entityValue: EntityValue { .bool(self) }
    public init?(entityValue value: EntityValue) { guard case .bool(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "bool" }
}

extension Int: EntityValueConvertible {
    public var entityValue: EntityValue { .int(self) }
    public init?(entityValue value: EntityValue) { guard case .int(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "int" }
}

extension Double: EntityValueConvertible {
    public var entityValue: EntityValue { .double(self) }
    public init?(entityValue value: EntityValue) { guard case .double(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "double" }
}

extension Date: EntityValueConvertible {
    public var entityValue: EntityValue { .date(self) }
    public init?(entityValue value: EntityValue) { guard case .date(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "date" }
}

extension String: EntityValueConvertible {
    public var entityValue: EntityValue { .string(self) }
    public init?(entityValue value: EntityValue) { guard case .string(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "string" }
}

extension Data: EntityValueConvertible {
    public var entityValue: EntityValue { .data(self) }
    public init?(entityValue value: EntityValue) { guard case .data(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "data" }
}

extension UUID: EntityValueConvertible {
    public var entityValue: EntityValue { .uuid(self) }
    public init?(entityValue value: EntityValue) { guard case .uuid(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "uuid" }
}

extension EntityID: EntityValueConvertible {
    public var entityValue: EntityValue { .entity(self) }
    public init?(entityValue value: EntityValue) { guard case .entity(let v) = value else { return nil }; self = v }
    public static var entityKindName: String { "entity" }
}

extension Array: EntityValueConvertible where Element: EntityValueConvertible {
    public var entityValue: EntityValue { .array(map(\.entityValue)) }
    public init?(entityValue value: EntityValue) {
        guard case .array(let elements) = value else { return nil }
        var converted: [Element] = []
        converted.reserveCapacity(elements.count)
        for element in elements {
            guard let typed = Element(entityValue: element) else { return nil }
            converted.append(typed)
        }
        self = converted
    }
    public static var entityKindName: String { "array of \(Element.entityKindName)" }
}
