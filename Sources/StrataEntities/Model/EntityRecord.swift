import Foundation

/// An entity as read in one snapshot: its identity, type, datestamps and the current entries of
/// the properties that were asked for (only those that exist; removed properties are absent).
public struct EntityRecord: Hashable, Sendable, CustomStringConvertible {
    /// The entity's identifier.
    public let id: EntityID
    /// The type label given when the entity was created.
    public let type: String
    /// When the entity was created.
    public let created: Date
    /// The datestamp of its newest property entry (its creation when it has none). Read-only:
    /// it follows from the entries.
    public let modified: Date
    /// The current entry of each requested property that has a value.
    public let properties: [String: PropertyEntry]

    /// A record with these fields as given (reads build their own; no check is made that they agree).
    public init(id: EntityID, type: String, created: Date, modified: Date, properties: [String: PropertyEntry]) {
        self.id = id
        self.type = type
        self.created = created
        self.modified = modified
        self.properties = properties
    }

    /// The current value of `key`, or nil when it has none (or was not asked for).
    public subscript(key: String) -> EntityValue? { properties[key]?.value }

    /// The current value of `key` as `T`.
    ///
    /// - Throws: `EntityError.unknownKey` when the entity has no value for `key` (or it was not
    ///   read), `EntityError.wrongValueType` when the value is of another kind; both name the
    ///   entity and the key.
    ///
    /// ```swift
    /// let born = try ada.value("born", as: Int.self)
    /// ```
    public func value<T: EntityValueConvertible>(_ key: String, as type: T.Type = T.self) throws -> T {
        guard let value = properties[key]?.value else { throw EntityError.unknownKey(entity: id, key: key) }
        guard let typed = T(entityValue: value) else {
            throw EntityError.wrongValueType(entity: id, key: key, expected: T.entityKindName, found: value.kindName)
        }
        return typed
    }

    /// `type id {key: value, ...}`, keys sorted.
    public var description: String {
        let values = properties.keys.sorted().map { "\($0): \(properties[$0]!.value.map(\.description) ?? "nil")" }
        return "\(type) \(id) {\(values.joined(separator: ", "))}"
    }
}
