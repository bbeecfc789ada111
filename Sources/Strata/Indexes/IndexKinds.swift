/// One value per instance → many instances per value. In a format: `Index(\.title)`, or a
/// composite `Index(\.shelf, \.title)` (equality on the leading parts, ranges on the last).
public struct OneToManyIndexRepresentation<Instance, Value: OrderedKey>: IndexRepresentation {
    /// What the index reads from an instance, its kind and value type (used by the datastore).
    public let definition: IndexDefinition<Instance>

    /// Indexes the value at `keyPath`: `Index(\.title)`. Inlinable, as the other key-path
    /// index declarations: the closure that reads the value is then compiled for the user's
    /// types, and reading it costs no runtime generic lookups on every write.
    @inlinable
    public init(_ keyPath: KeyPath<Instance, Value> & Sendable) {
        definition = SingleValueIndex.definition(.oneToMany, keyPath)
    }

    /// A composite index on two properties, ordered by `a` then `b`: `Index(\.shelf, \.title)`.
    /// Query it with a `CompositeKey` range (equality on `a`, a range on `b`).
    public init<A: OrderedKey, B: OrderedKey>(_ a: KeyPath<Instance, A> & Sendable, _ b: KeyPath<Instance, B> & Sendable)
    where Value == CompositeKey<A, B> {
        definition = SingleValueIndex.composite(.oneToMany, a, b)
    }

    /// A composite index on three properties, ordered by `a`, then `b`, then `c`.
    public init<A: OrderedKey, B: OrderedKey, C: OrderedKey>(_ a: KeyPath<Instance, A> & Sendable, _ b: KeyPath<Instance, B> & Sendable,
                                                            _ c: KeyPath<Instance, C> & Sendable)
    where Value == CompositeKey<A, B, C> {
        definition = SingleValueIndex.composite(.oneToMany, a, b, c)
    }
}

/// One value per instance, unique: a second instance with the same value is refused.
public struct OneToOneIndexRepresentation<Instance, Value: OrderedKey>: UniqueIndexRepresentation {
    /// What the index reads from an instance, its kind and value type (used by the datastore).
    public let definition: IndexDefinition<Instance>

    /// A unique index on the value at `keyPath`: `OneToOneIndex(\.email)`. A write that would give
    /// two instances the same value throws `DatastoreError.uniqueIndexViolation`.
    @inlinable
    public init(_ keyPath: KeyPath<Instance, Value> & Sendable) {
        definition = SingleValueIndex.definition(.oneToOne, keyPath)
    }

    /// A unique composite index: no two instances may share the pair (`a`, `b`).
    public init<A: OrderedKey, B: OrderedKey>(_ a: KeyPath<Instance, A> & Sendable, _ b: KeyPath<Instance, B> & Sendable)
    where Value == CompositeKey<A, B> {
        definition = SingleValueIndex.composite(.oneToOne, a, b)
    }
}

/// Each element of a sequence property is indexed (duplicates collapse); many instances per value.
public struct ManyToManyIndexRepresentation<Instance, Value: OrderedKey>: IndexRepresentation {
    /// What the index reads from an instance, its kind and value type (used by the datastore).
    public let definition: IndexDefinition<Instance>

    /// Indexes every element of the sequence at `keyPath`: `ManyToManyIndex(\.tags)`.
    @inlinable
    public init<Values: Sequence>(_ keyPath: KeyPath<Instance, Values> & Sendable) where Values.Element == Value {
        definition = SequenceIndex.definition(.manyToMany, keyPath)
    }
}

/// Each element of a sequence property is indexed, unique across instances.
public struct ManyToOneIndexRepresentation<Instance, Value: OrderedKey>: UniqueIndexRepresentation {
    /// What the index reads from an instance, its kind and value type (used by the datastore).
    public let definition: IndexDefinition<Instance>

    /// Indexes every element of the sequence at `keyPath`, each value owned by at most one instance;
    /// a clash throws `DatastoreError.uniqueIndexViolation`.
    @inlinable
    public init<Values: Sequence>(_ keyPath: KeyPath<Instance, Values> & Sendable) where Values.Element == Value {
        definition = SequenceIndex.definition(.manyToOne, keyPath)
    }
}

@usableFromInline
enum SingleValueIndex {
    @inlinable
    static func definition<Instance, Value: OrderedKey>(_ kind: IndexKind, _ keyPath: KeyPath<Instance, Value> & Sendable) -> IndexDefinition<Instance> {
        // The value is read by its offset where the key path names stored inline storage (see `PropertyReader`).
        let property = PropertyReader(keyPath)
        return IndexDefinition(kind: kind, path: describe(keyPath), valueType: Value.self, single: { instance in
            property.read(instance).orderedKeyBytes
        }, same: sameOrderedKey(property), appendSingle: { instance, writer in
            property.read(instance).encodeOrderedKey(into: &writer)
        })
    }

    static func composite<Instance, each Part: OrderedKey>(_ kind: IndexKind, _ parts: repeat KeyPath<Instance, each Part> & Sendable)
    -> IndexDefinition<Instance> {
        var paths: [String] = []
        for part in repeat each parts { paths.append(describe(part)) }
        var types: [String] = []
        for part in repeat (each Part).self { types.append("\(part)") }
        return IndexDefinition(kind: kind, path: paths.joined(separator: ", "), valueType: CompositeKey<repeat each Part>.self,
                               valueTypeName: "(\(types.joined(separator: ", ")))", single: { instance in
            CompositeKey(repeat instance[keyPath: each parts]).orderedKeyBytes
        })
    }
}

@usableFromInline
enum SequenceIndex {
    @inlinable
    static func definition<Instance, Values: Sequence>(_ kind: IndexKind, _ keyPath: KeyPath<Instance, Values> & Sendable)
    -> IndexDefinition<Instance> where Values.Element: OrderedKey {
        IndexDefinition(kind: kind, path: describe(keyPath), valueType: Values.Element.self) { [keyPath] instance in
            instance[keyPath: keyPath].map(\.orderedKeyBytes)
        }
    }
}

/// Marks an index as direct: each entry keeps a full copy of the instance, so loads through it
/// need no second lookup (at the cost of space and write time).
@propertyWrapper
public struct Direct<Index: IndexRepresentation>: Sendable {
    /// The index being marked direct.
    public var wrappedValue: Index
    /// Marks `wrappedValue` direct: `@Direct var byTitle = Index(\.title)`.
    public init(wrappedValue: Index) { self.wrappedValue = wrappedValue }
}

protocol DirectIndexMarker {
    var markedIndex: Any { get }
}

extension Direct: DirectIndexMarker {
    var markedIndex: Any { wrappedValue }
}

extension DatastoreFormat {
    /// A unique index on one value per instance (`OneToOneIndexRepresentation`).
    public typealias OneToOneIndex<Value: OrderedKey> = OneToOneIndexRepresentation<Instance, Value>
    /// An index on each element of a sequence property (`ManyToManyIndexRepresentation`).
    public typealias ManyToManyIndex<Value: OrderedKey> = ManyToManyIndexRepresentation<Instance, Value>
    /// A unique index on each element of a sequence property (`ManyToOneIndexRepresentation`).
    public typealias ManyToOneIndex<Value: OrderedKey> = ManyToOneIndexRepresentation<Instance, Value>
}
