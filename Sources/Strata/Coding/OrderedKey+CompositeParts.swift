/// What a composite key is made of, known at run time: lets a `KeyPrefix` be checked against the
/// key type it is used with.
public protocol CompositeOrderedKey: OrderedKey {
    /// The component types, first to last.
    static var componentTypes: [any OrderedKey.Type] { get }
}

extension CompositeKey: CompositeOrderedKey {
    /// The component types, first to last (`[Int.self, String.self]` for `CompositeKey<Int, String>`).
    public static var componentTypes: [any OrderedKey.Type] {
        var types: [any OrderedKey.Type] = []
        for type in repeat (each Component).self { types.append(type) }
        return types
    }
}

/// A composite key is stored (as an identifier, in an instance) as an array of its components.
extension CompositeKey: Encodable where repeat each Component: Encodable {
    /// Encodes the components, in order, as an unkeyed container (an array in JSON).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for component in repeat each components { try container.encode(component) }
    }
}

extension CompositeKey: Decodable where repeat each Component: Decodable {
    /// Decodes the components from an unkeyed container, in order.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        self.init(repeat try container.decode((each Component).self))
    }
}

extension OrderedKey {
    /// The parts of this key type: its components if composite, else itself alone.
    static var keyParts: [any OrderedKey.Type] {
        (Self.self as? any CompositeOrderedKey.Type)?.componentTypes ?? [Self.self]
    }
}

extension OrderedKey {
    /// A readable name of this key type: `(Int, String)` for a composite key.
    static var keyTypeName: String {
        guard let composite = Self.self as? any CompositeOrderedKey.Type else { return "\(Self.self)" }
        return "(" + composite.componentTypes.map { "\($0)" }.joined(separator: ", ") + ")"
    }
}
