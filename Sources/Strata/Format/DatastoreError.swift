/// Errors of the typed layer. Engine errors (`StrataError`) pass through unchanged.
public enum DatastoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A stored instance has a version newer than this code knows: written by a newer build.
    case versionTooNew(datastore: String, stored: String, newestKnown: String)
    /// A stored version this code does not list at all.
    case unknownVersion(datastore: String, stored: String)
    /// An instance of an older version was read but the format has no migration for it.
    case migrationMissing(datastore: String, version: String)
    /// A unique index already holds this value for another instance; nothing was written.
    case uniqueIndexViolation(datastore: String, index: String, value: String)
    /// `insert` found an instance with the same identifier; nothing was written.
    case instanceExists(datastore: String, id: String)
    /// `delete` found no instance with this identifier.
    case instanceNotFound(datastore: String, id: String)
    /// The index was declared or changed after the data was written; call `warm(progress:)`.
    case indexNotBuilt(datastore: String, index: String)
    /// The key path does not name an index declared by the format.
    case unknownIndex(datastore: String, index: String)
    /// The stored instance with identifier `id` cannot be decoded (damaged bytes, or a type
    /// that changed without a new version); `reason` is the decoder's error.
    case corruptInstance(datastore: String, id: String, reason: String)
    /// An entry of index `index` cannot be parsed (its key does not hold a value and an
    /// identifier), or names an instance that does not exist.
    case corruptIndexEntry(datastore: String, index: String, reason: String)
    /// An entry of the datastore's change log (what `changes()` reads) cannot be parsed.
    case corruptLogEntry(datastore: String, generation: UInt64, reason: String)
    /// The format declares indexes whose names (property names) differ only in Unicode
    /// normalization, such as "\u{212B}" and "A\u{30A}": Swift's `==` calls them equal, the store
    /// would keep them as two trees. Thrown at open, before anything is written; rename one.
    case equivalentIndexNames(datastore: String, names: [String])

    public var description: String {
        switch self {
        case let .versionTooNew(datastore, stored, newest):
            return "\(datastore): an instance was written with version \(stored), newer than this code's newest version \(newest); upgrade this program before reading it"
        case let .unknownVersion(datastore, stored):
            return "\(datastore): stored version \(stored) is not one of the format's versions"
        case let .migrationMissing(datastore, version):
            return "\(datastore): instances of version \(version) need a migration; implement migrate(_:from:) for it"
        case let .uniqueIndexViolation(datastore, index, value):
            return "\(datastore): unique index '\(index)' already holds \(value) for another instance; nothing was written"
        case let .instanceExists(datastore, id):
            return "\(datastore): an instance with id \(id) already exists; use persist to replace it"
        case let .instanceNotFound(datastore, id):
            return "\(datastore): no instance with id \(id)"
        case let .indexNotBuilt(datastore, index):
            return "\(datastore): index '\(index)' changed since the data was written; call warm(progress:) to build it"
        case let .unknownIndex(datastore, index):
            return "\(datastore): \(index) is not an index declared by the format"
        case let .corruptInstance(datastore, id, reason):
            return "\(datastore): the stored instance \(id) cannot be decoded (\(reason)); run `strata check`, restore it from a backup or write it again"
        case let .corruptIndexEntry(datastore, index, reason):
            return "\(datastore): an entry of index '\(index)' is damaged (\(reason)); rebuild the index with warm(progress:) after restoring the store"
        case let .corruptLogEntry(datastore, generation, reason):
            return "\(datastore): the change log entry of generation \(generation) is damaged (\(reason))"
        case let .equivalentIndexNames(datastore, names):
            let spelled = names.map { "'\($0)' (UTF-8 \($0.utf8.map { String($0, radix: 16) }.joined(separator: " ")))" }
            return "\(datastore): the indexes \(spelled.joined(separator: " and ")) have names that differ only in Unicode normalization; rename one of the properties"
        }
    }
}
