/// A tuple of keys that sorts lexicographically by component: first by the first component,
/// ties broken by the second, and so on.
///
/// Its encoding is the plain concatenation of the component encodings. Because every
/// component encoding is self-delimiting (prefix-free), the first byte where two
/// concatenations differ lies inside the first differing component, so `memcmp` order equals
/// component-wise order. This also makes range scans over a leading component possible: all
/// keys whose first component is `x` lie in
/// `[x.orderedKeyBytes, OrderedKeyWriter.prefixUpperBound(of: x.orderedKeyBytes))`.
///
///     let key = CompositeKey(authorID, publishedAt, postID)   // CompositeKey<UUID, Date, Int>
public struct CompositeKey<each Component: OrderedKey>: OrderedKey, Comparable {
    public let components: (repeat each Component)

    public init(_ components: repeat each Component) {
        self.components = (repeat each components)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        for (left, right) in repeat (each lhs.components, each rhs.components) {
            guard left == right else { return false }
        }
        return true
    }

    /// Component-wise order, which is the order of the encodings (see the type comment); the
    /// components need not be `Comparable` themselves (an `Optional` one is not).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.orderedKeyBytes.lexicographicallyPrecedes(rhs.orderedKeyBytes)
    }

    public func hash(into hasher: inout Hasher) {
        for component in repeat each components {
            hasher.combine(component)
        }
    }

    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        for component in repeat each components {
            component.encodeOrderedKey(into: &writer)
        }
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Self {
        // Pack expansion evaluates left to right, matching the encoding order.
        Self(repeat try (each Component).decodeOrderedKey(from: &reader))
    }
}
