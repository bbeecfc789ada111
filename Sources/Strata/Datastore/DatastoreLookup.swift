import Glibc
import StrataCore

/// The two single-instance read paths (by identifier, by a unique index's value), written once for
/// a reader's transaction and for the snapshot of `Datastore.load`.
///
/// Why the shape: these run unspecialized (the format is generic and the caller in another module),
/// so every generic type they touch costs a runtime metadata lookup (~300 instructions each). This
/// is a non-generic namespace, so calling it needs no `DatastoreReader<F>` metadata, and the found
/// instance is moved into `found` (consumed, not copied) instead of being returned as
/// `F.Instance?` through the generic `withSnapshot`, which needed `Optional<F.Instance>`'s. The
/// public entry points are small `@inlinable` wrappers that build the optional in the caller's
/// (specialized) code.
@usableFromInline enum DatastoreLookup {
    /// `load(idBytes:schema:in:found:)` on `snapshot`: the entry point of the inlinable
    /// `Datastore.load` (which calls it inside a `withSnapshot` call and cannot name the internal
    /// `DatastoreTreeReads`).
    @usableFromInline static func load<F: DatastoreFormat>(idBytes: UnsafeRawBufferPointer, schema: DatastoreSchema<F>, snapshot: ReadSnapshot,
                                                           found: (consuming F.Instance) -> Void) throws {
        try load(idBytes: idBytes, schema: schema, in: snapshot, found: found)
    }

    /// Looks up and decodes the instance with identifier `idBytes`; calls `found` if there is one.
    static func load<F: DatastoreFormat>(idBytes: UnsafeRawBufferPointer, schema: DatastoreSchema<F>, in reads: some DatastoreTreeReads,
                                         found: (consuming F.Instance) -> Void) throws {
        // Decoded from the bytes in place: no view of the envelope (a retain and a release).
        try reads.withValue(rawKey: idBytes, inTree: schema.layout.primary) { envelope in
            guard let envelope else { return }
            found(try schema.decode(bytes: envelope, id: Array(idBytes)))
        }
    }

    /// The instance a unique index maps the value whose ordered key bytes are `valueBytes` to; calls
    /// `found` if there is one. One seek: the first index key at or after `valueBytes` is the
    /// value's entry if it starts with them (the value's encoding is self-delimiting, so no other
    /// value's key does), and what follows them is the identifier. Then at most one primary lookup
    /// (none for a direct index, whose entry holds the envelope). `info`: the schema's own
    /// (`DatastoreSchema.readTarget(_:)`), read in place rather than copied.
    static func load<F: DatastoreFormat>(uniqueValueBytes valueBytes: UnsafeRawBufferPointer, index info: UnsafePointer<IndexReadTarget>,
                                         schema: DatastoreSchema<F>, in reads: some DatastoreTreeReads,
                                         found: (consuming F.Instance) -> Void) throws {
        // The entry, the identifier and the instance are read in place (no views: each would
        // retain and release its owner); the snapshot stays unchanged during the call.
        try reads.withFirstEntry(atOrAfter: valueBytes, inTree: info.pointee.tree) { entry in
            guard let entry, entry.key.count >= valueBytes.count,
                  valueBytes.isEmpty || memcmp(entry.key.baseAddress!, valueBytes.baseAddress!, valueBytes.count) == 0 else { return }
            let idBytes = UnsafeRawBufferPointer(rebasing: entry.key[valueBytes.count...])
            if info.pointee.isDirect {
                found(try schema.decode(bytes: entry.value, id: Array(idBytes)))
                return
            }
            try reads.withValue(rawKey: idBytes, inTree: schema.layout.primary) { envelope in
                guard let envelope else {
                    throw DatastoreError.corruptIndexEntry(datastore: F.name, index: info.pointee.name, reason: "it names a missing instance")
                }
                found(try schema.decode(bytes: envelope, id: Array(idBytes)))
            }
        }
    }
}
