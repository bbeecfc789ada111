import Foundation

/// The versions a format has known. Raw values are ordered (`Int` or `String`): a stored version
/// greater than every known one was written by newer code and is refused rather than misread.
public protocol DatastoreVersion: RawRepresentable, CaseIterable, Hashable, Sendable where RawValue: OrderedKey & Codable & Comparable {}

/// The versions of a format that has never changed: only `v1` (stored as 1). The default
/// `Version` of a `DatastoreFormat`, whose `currentVersion` is then `.v1`, so such a format
/// declares neither. When the format changes, declare `enum Version: Int, DatastoreVersion
/// { case v1 = 1, v2 = 2 }` and a migration: instances stored at 1 read as `v1`.
public enum InitialVersion: Int, DatastoreVersion {
    case v1 = 1
}

/// How instances are encoded in the store.
public enum InstanceCoding: Sendable, Equatable {
    /// Strata's compact binary Codable coder (the default).
    case binary
    /// JSON, for stores other tools read.
    case json
}

/// Describes one stored type: its name, identifier, versions with migrations, coding and indexes.
///
/// ```swift
/// struct BookFormat: DatastoreFormat {
///     static let name = "books"
///     enum Version: Int, DatastoreVersion { case v1 = 1, v2 = 2 }
///     static let currentVersion = Version.v2
///     typealias Instance = Book
///     static func migrate(_ stored: StoredInstance, from version: Version) throws -> Book { ... }
///
///     let title = Index(\.title)
///     let authors = ManyToManyIndex(\.authors)
///     @Direct var isbn = OneToOneIndex(\.isbn)
///     let shelfTitle = Index(\.shelf, \.title)
/// }
/// ```
/// Indexes are the format's stored properties; Strata finds them by reflection, named after the
/// property. Changing them is picked up by `Datastore.warm(progress:)`.
///
/// Names are the store's tree names, told apart by their UTF-8 bytes, not by Swift's `==`, which
/// calls canonically equivalent strings ("\u{212B}" and "A\u{30A}", or a precomposed "é" and
/// "e\u{301}") equal. Two datastores whose names differ only so are two datastores, and one may
/// take the other over through `formerNames`. An index property renamed only so is a new index
/// (built by `warm`, the old one dropped). One format may not declare two indexes whose names
/// differ only so: opening it throws `DatastoreError.equivalentIndexNames`.
public protocol DatastoreFormat: Sendable {
    /// The stored type.
    associatedtype Instance: Codable & Sendable
    /// The type of the instance identifier, the primary key (its `orderedKeyBytes` order the datastore).
    associatedtype Identifier: OrderedKey & Codable
    /// The format's versions; instances are stored with the version they were written at.
    /// Default: `InitialVersion` (only `v1`), for a format that has not changed yet.
    associatedtype Version: DatastoreVersion = InitialVersion

    /// The datastore's name in the store (its trees are named after it), compared by its UTF-8 bytes.
    static var name: String { get }
    /// The version new writes are stored at; older stored versions go through `migrate(_:from:)`.
    static var currentVersion: Version { get }
    /// How instances are encoded. Default: `.binary`. Must return the same value every time: a
    /// datastore reads it once when it is opened (how it decodes is decided then).
    static var coding: InstanceCoding { get }
    /// The identifier of `instance`. Provided when `Instance` is `Identifiable` with `ID == Identifier`.
    static func identifier(of instance: Instance) -> Identifier
    /// Turns an instance stored by an older version into the current `Instance`.
    static func migrate(_ stored: StoredInstance, from version: Version) throws -> Instance
    /// Fields renamed, and defaults for fields older instances lack, without a version bump (see
    /// `FieldEvolution`). Default: none. Must return the same value every time, as `coding`.
    static var fieldEvolution: FieldEvolution? { get }
    /// Names this datastore had before: on first open, the data stored under one of them is
    /// taken over without copying (see `Datastore`). Default: none.
    static var formerNames: [String] { get }

    /// Creates the format value whose stored properties declare the indexes.
    init()
}

extension DatastoreFormat {
    /// Default coding: `.binary`.
    public static var coding: InstanceCoding { .binary }
    /// Default: no field renames or defaults.
    public static var fieldEvolution: FieldEvolution? { nil }
    /// Default: no former names.
    public static var formerNames: [String] { [] }

    /// Default: no migrations; reading an older version throws `DatastoreError.migrationMissing`.
    public static func migrate(_ stored: StoredInstance, from version: Version) throws -> Instance {
        throw DatastoreError.migrationMissing(datastore: name, version: "\(version.rawValue)")
    }

    /// One value → many instances.
    public typealias Index<Value: OrderedKey> = OneToManyIndexRepresentation<Instance, Value>
}

extension DatastoreFormat where Version == InitialVersion {
    /// A format that has never changed writes `v1`.
    public static var currentVersion: InitialVersion { .v1 }
}

extension DatastoreFormat where Instance: Identifiable, Instance.ID == Identifier {
    /// The instance's `id`.
    public static func identifier(of instance: Instance) -> Identifier { instance.id }
}
