import Synchronization

/// A Swift type for the entities of one type label, with typed property accessors. Register it
/// with `EntityStore.register(_:)`; reads that return kinds (`objects`) then build it for
/// entities of that type.
///
/// ```swift
/// struct Person: EntityKind {
///     static let entityType = "person"
///     let record: EntityRecord
///     init(record: EntityRecord) { self.record = record }
///     var name: String { get throws { try value("name") } }
/// }
/// ```
public protocol EntityKind: Sendable {
    /// The entity type label this kind stands for.
    static var entityType: String { get }
    /// Builds the kind from a record of its type (the properties that were read).
    init(record: EntityRecord) throws
    /// The record the kind was built from.
    var record: EntityRecord { get }
}

extension EntityKind {
    /// The entity's identifier.
    public var id: EntityID { record.id }

    /// The current value of `key` as `T` (see `EntityRecord.value(_:as:)` for the errors).
    public func value<T: EntityValueConvertible>(_ key: String, as type: T.Type = T.self) throws -> T {
        try record.value(key, as: type)
    }

    /// A reference to this entity, for operations.
    public var reference: EntityReference { .id(record.id) }
}

/// The kind of entities whose type has no registered kind.
public struct AnyEntity: EntityKind {
    /// Empty: `AnyEntity` stands for any type without a registered kind.
    public static var entityType: String { "" }
    /// The record as read.
    public let record: EntityRecord
    /// Wraps `record`.
    public init(record: EntityRecord) { self.record = record }
}

/// The kinds registered with one store, by type label.
final class EntityKindRegistry: Sendable {
    private let kinds = Mutex<[String: any EntityKind.Type]>([:])

    func register(_ kind: any EntityKind.Type) { kinds.withLock { $0[kind.entityType] = kind } }

    func make(_ record: EntityRecord) throws -> any EntityKind {
        let kind: any EntityKind.Type = kinds.withLock { $0[record.type] } ?? AnyEntity.self
        return try Self.build(kind, from: record)
    }

    /// Opens the existential metatype so its initializer can be called.
    private static func build<K: EntityKind>(_ kind: K.Type, from record: EntityRecord) throws -> any EntityKind {
        try K(record: record)
    }
}

extension EntityReadContext {
    /// The entities the references denote, each as its type's registered kind (`AnyEntity` when
    /// none), with the properties `keys` (all when nil).
    public func objects(_ references: [EntityReference], keys: [String]? = nil) throws -> [EntityReference: any EntityKind] {
        try records(references, keys: keys).mapValues { try registry.make($0) }
    }

    /// The entity as `kind`, or nil when the reference resolves to nothing.
    /// - Throws: `EntityError.wrongEntityType` when the entity is of another type.
    public func object<K: EntityKind>(_ reference: EntityReference, as kind: K.Type, keys: [String]? = nil) throws -> K? {
        guard let record = try record(reference, keys: keys) else { return nil }
        guard record.type == K.entityType else { throw EntityError.wrongEntityType(entity: record.id, expected: K.entityType, found: record.type) }
        return try K(record: record)
    }

    /// Every entity of `kind`'s type, in creation order.
    public func objects<K: EntityKind>(_ kind: K.Type, keys: [String]? = nil, limit: Int? = nil, order: EntityOrder = .ascending) throws -> [K] {
        try entities(ofType: K.entityType, limit: limit, order: order).compactMap { try object(.id($0), as: kind, keys: keys) }
    }
}
