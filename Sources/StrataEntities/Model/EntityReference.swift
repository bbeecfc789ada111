/// Says which entity an operation is about: by identifier, or by a property match (optionally
/// only among entities of a type). A reference may also say how to create the entity when
/// nothing matches (get-or-create): the creation happens inside the operation, atomically with
/// the rest of it.
///
/// ```swift
/// let ada = EntityReference.named("Ada", ofType: "person")
///     .createIfMissing(with: ["born": 1815])      // initial properties, ignored if she exists
/// let fresh = EntityReference.new("book", with: ["title": "Notes"])
/// ```
///
/// Within one operation (one transaction), every reference with the same match and type
/// resolves to the same entity: resolving an unresolved reference twice creates one entity.
/// A property match is remembered only while its entity still matches: once the transaction
/// changes or removes that property, or deletes the entity, the reference is resolved afresh
/// (and may then find another entity, none, or create one).
public struct EntityReference: Hashable, Sendable, CustomStringConvertible {
    /// How a reference finds its entity.
    public enum Match: Hashable, Sendable {
        /// The entity with this identifier.
        case id(EntityID)
        /// The entity whose current value of `key` equals `value` (`EntityValue` equality).
        case property(key: String, value: EntityValue)
    }

    /// How the entity is found: by identifier or by a property value.
    public let match: Match
    /// For a property match: only entities of this type match. For creation: the new entity's type.
    public let type: String?
    /// Whether the entity is created when nothing matches.
    public let createsIfMissing: Bool
    /// Properties given to an entity this reference creates (ignored when it already exists).
    public let initialProperties: [String: EntityValue]

    /// The general form; `id(_:)`, `whereKey(_:equals:ofType:)`, `named(_:ofType:)`, `new(_:with:)` and
    /// `createIfMissing(as:with:)` cover the usual cases.
    public init(match: Match, type: String? = nil, createsIfMissing: Bool = false, initialProperties: [String: EntityValue] = [:]) {
        self.match = match
        self.type = type
        self.createsIfMissing = createsIfMissing
        self.initialProperties = initialProperties
    }

    /// The entity with this identifier (nothing if it does not exist or was deleted).
    public static func id(_ id: EntityID) -> EntityReference { EntityReference(match: .id(id)) }

    /// The one entity whose current value of `key` equals `value` (of `type`, when given).
    public static func whereKey(_ key: String, equals value: EntityValue, ofType type: String? = nil) -> EntityReference {
        EntityReference(match: .property(key: key, value: value), type: type)
    }

    /// `whereKey("name", equals: .string(name), ofType: type)`.
    public static func named(_ name: String, ofType type: String? = nil) -> EntityReference {
        whereKey("name", equals: .string(name), ofType: type)
    }

    /// A new entity of `type`: a fresh identifier (`EntityID.timeOrdered()`) that is created
    /// when first resolved. The same value resolved again (in this or a later operation) is that
    /// one entity.
    public static func new(_ type: String, with properties: [String: EntityValue] = [:]) -> EntityReference {
        EntityReference(match: .id(EntityID.timeOrdered()), type: type, createsIfMissing: true, initialProperties: properties)
    }

    /// This reference, creating the entity when nothing matches: of `type` (default: the
    /// reference's own type), with `properties` plus, for a property match, the matched property.
    public func createIfMissing(as type: String? = nil, with properties: [String: EntityValue] = [:]) -> EntityReference {
        EntityReference(match: match, type: type ?? self.type, createsIfMissing: true, initialProperties: properties)
    }

    /// Hashes part of what finds the entity (the identifier, or the matched value), not the
    /// creation details: references are dictionary keys of every bulk result, and hashing the
    /// initial properties cost more than the lookup. Equal references still hash equally (`==`
    /// compares every field).
    public func hash(into hasher: inout Hasher) { match.hashIdentity(into: &hasher) }

    /// What identifies the entity within one operation (the memo key of resolution).
    var identity: Identity { Identity(match: match, type: type) }

    struct Identity: Hashable {
        let match: Match
        let type: String?

        /// The match's part only (see `Match.hashIdentity`); `==` compares both fields.
        func hash(into hasher: inout Hasher) { match.hashIdentity(into: &hasher) }
    }

    /// `reference to <id>` or `reference where <key> == <value>`, with the type when there is one.
    public var description: String {
        let typed = type.map { " of type '\($0)'" } ?? ""
        switch match {
        case .id(let id): return "reference to \(id)\(typed)"
        case .property(let key, let value): return "reference where \(key) == \(value)\(typed)"
        }
    }
}

extension EntityReference.Match {
    /// Hashes the identifier (two words), or the matched value alone: equal matches have equal
    /// values, so equal references (and identities) still hash equally. Why not the key and the
    /// type too: a bulk get-or-create names one key and one type for every reference, so they
    /// tell no two references apart, and hashing the two strings (on every insertion into the
    /// result and the resolution memo, and again whenever those grow) cost more than the value.
    func hashIdentity(into hasher: inout Hasher) {
        switch self {
        case .id(let id): id.hash(into: &hasher)
        case .property(_, let value): value.hash(into: &hasher)
        }
    }
}
