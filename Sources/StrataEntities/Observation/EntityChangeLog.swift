import Foundation
import Strata
import StrataCore

/// What one commit did to one entity.
public struct EntityChange: Hashable, Sendable {
    /// Whether the entity was created, updated or deleted by the commit.
    public enum Kind: UInt8, Sendable {
        case created = 1
        case updated = 2
        case deleted = 3
    }

    /// What happened to the entity; within one commit created stays created unless it was deleted.
    public var kind: Kind
    /// The property keys that got new entries (values or removals).
    public var keys: Set<String>

    /// A change of `kind` touching `keys`.
    public init(kind: Kind, keys: Set<String> = []) {
        self.kind = kind
        self.keys = keys
    }

    /// This change followed by `later` in the same commit: created stays created (unless
    /// deleted), deleted wins, keys accumulate.
    mutating func absorb(_ later: EntityChange) {
        switch (kind, later.kind) {
        case (_, .deleted): kind = .deleted
        case (.created, _): break
        default: kind = later.kind
        }
        keys.formUnion(later.keys)
    }
}

/// The changes of one commit of the entity store, as an observer in any process sees them.
public struct EntityCommit: Sendable {
    /// The generation (transaction id) that committed them.
    public let generation: UInt64
    /// What the commit did to each entity it touched.
    public let changes: [EntityID: EntityChange]
}

/// The `entities.log` tree: one entry per committing transaction, key = its generation
/// (big-endian), value = its changes: per entity `elementMarker`, the 16 id bytes, the kind,
/// then each key as `elementMarker` + ordered string, ending with `arrayEnd`; the list ends with
/// `arrayEnd`. Observers read the entries after the generation they have reported.
///
/// Old entries are trimmed as the typed layer's datastore logs are (`ChangeLogTrimming`: an
/// observer holds a snapshot at the generation it has reported, so it never loses entries it
/// still needs; a batch at a time, so the log's first page is not rewritten on every commit).
enum EntityChangeLog {

    static func encode(_ changes: [EntityID: EntityChange]) -> [UInt8] {
        var encoder = Encoder(expectedCount: changes.count)
        for (id, change) in changes { encoder.add(id, kind: change.kind, keys: change.keys) }
        return encoder.finished()
    }

    /// Builds the value of a log entry one entity at a time (see the type's documentation).
    struct Encoder {
        private var writer: OrderedKeyWriter

        init(expectedCount: Int) { writer = OrderedKeyWriter(reservingCapacity: expectedCount * 32 + 64) }

        mutating func add(_ id: EntityID, kind: EntityChange.Kind, keys: some Sequence<String>) {
            begin(id, kind: kind)
            for key in keys { addKey(key) }
            end()
        }

        /// Starts the change of one entity: `addKey` each key, then `end`.
        mutating func begin(_ id: EntityID, kind: EntityChange.Kind) {
            writer.writeByte(EntityValueCoding.elementMarker)
            writer.write(id.uuid)
            writer.writeByte(kind.rawValue)
        }

        mutating func addKey(_ key: String) {
            writer.writeByte(EntityValueCoding.elementMarker)
            writer.write(key)
        }

        /// `addKey` for a key given in its ordered encoding (`EntityLayout.encodedName`), which is
        /// what `addKey` writes: a commit names the same few keys for every entity it changed.
        mutating func addEncodedKey(_ encoded: [UInt8]) {
            writer.writeByte(EntityValueCoding.elementMarker)
            encoded.withUnsafeBytes { writer.writeFixedWidthBytes($0) }
        }

        mutating func end() { writer.writeByte(EntityValueCoding.arrayEnd) }

        /// The encoded changes.
        mutating func finished() -> [UInt8] {
            writer.writeByte(EntityValueCoding.arrayEnd)
            return writer.bytes
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [EntityID: EntityChange] {
        try EntityError.reportingDamage { try decodeEntries(bytes) }
    }

    private static func decodeEntries(_ bytes: UnsafeRawBufferPointer) throws -> [EntityID: EntityChange] {
        var reader = OrderedKeyReader(bytes)
        var changes: [EntityID: EntityChange] = [:]
        while try reader.readByte(reading: "log entry marker") == EntityValueCoding.elementMarker {
            let id = EntityID(try reader.read(UUID.self))
            let raw = try reader.readByte(reading: "change kind")
            guard let kind = EntityChange.Kind(rawValue: raw) else { throw EntityError.corrupt(reason: "change kind \(raw) in the log") }
            var keys = Set<String>()
            while try reader.readByte(reading: "log key marker") == EntityValueCoding.elementMarker { keys.insert(try reader.read(String.self)) }
            changes[id] = EntityChange(kind: kind, keys: keys)
        }
        return changes
    }

    static func key(_ generation: UInt64) -> [UInt8] { withUnsafeBytes(of: generation.bigEndian) { Array($0) } }

    /// The generation of a stored log key (the inverse of `key(_:)`).
    /// - Throws: `EntityError.corrupt` if `key` is not 8 bytes.
    static func generation(of key: ByteView) throws -> UInt64 {
        guard key.count == 8 else { throw EntityError.corrupt(reason: "log key of \(key.count) bytes") }
        return key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    /// Records `changes` in the commit's entry and trims entries no observer can still need.
    ///
    /// Several write contexts can end in one commit (group commit runs each queued request in its
    /// own nested transaction), so the entry may exist already: the changes are merged into it,
    /// earlier ones first. Replacing it would lose the earlier requests' changes for observers.
    /// `encoded` is the changes as `Encoder` wrote them; `changes` gives them as a dictionary, for
    /// the rare merge.
    static func append(_ encoded: [UInt8], changes: () -> [EntityID: EntityChange], in transaction: WriteTransaction, log: Tree) throws {
        let key = key(transaction.transactionID)
        guard let earlier = try transaction.get(key, in: log) else {
            try transaction.put(key, encoded, in: log)
            try ChangeLogTrimming.trim(log, in: transaction) { EntityError.corrupt(reason: "log key of \($0) bytes") }
            return
        }
        var merged = try earlier.withUnsafeBytes { try decode($0) }
        for (id, change) in changes() {
            if var first = merged[id] {
                first.absorb(change)
                merged[id] = first
            } else {
                merged[id] = change
            }
        }
        try transaction.put(key, encode(merged), in: log)
    }
}
