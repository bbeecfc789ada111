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

    /// A plain identifier reference (no type, no creation) is held inline, with nothing to
    /// retain: bulk reads take and return thousands of them, and every copy of the general
    /// form (two strings, a value and a dictionary) cost retains and releases of each. The
    /// general form is one shared, immutable box: one retain per copy. `init` picks the inline
    /// form whenever it can, so one reference has one form.
    private enum Storage: Sendable {
        case id(EntityID)
        case general(General)
    }

    /// The fields of a reference that is not a plain identifier.
    private final class General: Sendable {
        let match: Match
        let type: String?
        let createsIfMissing: Bool
        let initialProperties: [String: EntityValue]

        init(match: Match, type: String?, createsIfMissing: Bool, initialProperties: [String: EntityValue]) {
            self.match = match
            self.type = type
            self.createsIfMissing = createsIfMissing
            self.initialProperties = initialProperties
        }
    }

    private let storage: Storage

    /// How the entity is found: by identifier or by a property value.
    public var match: Match {
        switch storage {
        case .id(let id): .id(id)
        case .general(let general): general.match
        }
    }

    /// For a property match: only entities of this type match. For creation: the new entity's type.
    public var type: String? {
        switch storage {
        case .id: nil
        case .general(let general): general.type
        }
    }

    /// Whether the entity is created when nothing matches.
    public var createsIfMissing: Bool {
        switch storage {
        case .id: false
        case .general(let general): general.createsIfMissing
        }
    }

    /// Properties given to an entity this reference creates (ignored when it already exists).
    public var initialProperties: [String: EntityValue] {
        switch storage {
        case .id: [:]
        case .general(let general): general.initialProperties
        }
    }

    /// The general form; `id(_:)`, `whereKey(_:equals:ofType:)`, `named(_:ofType:)`, `new(_:with:)` and
    /// `createIfMissing(as:with:)` cover the usual cases.
    public init(match: Match, type: String? = nil, createsIfMissing: Bool = false, initialProperties: [String: EntityValue] = [:]) {
        if case .id(let id) = match, type == nil, !createsIfMissing, initialProperties.isEmpty {
            storage = .id(id)
        } else {
            storage = .general(General(match: match, type: type, createsIfMissing: createsIfMissing, initialProperties: initialProperties))
        }
    }

    /// Equal when every field is equal (two plain identifiers: when the identifiers are).
    public static func == (lhs: EntityReference, rhs: EntityReference) -> Bool {
        switch (lhs.storage, rhs.storage) {
        case (.id(let left), .id(let right)):
            return left == right
        case (.general(let left), .general(let right)):
            if left === right { return true }
            return left.match == right.match && left.type == right.type && left.createsIfMissing == right.createsIfMissing
                && left.initialProperties == right.initialProperties
        default:
            // `init` holds every plain identifier inline, so the two forms never denote equal references.
            return false
        }
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
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .id(let id): id.hash(into: &hasher) // as `Match.hashIdentity` hashes it
        case .general(let general): general.match.hashIdentity(into: &hasher)
        }
    }

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
