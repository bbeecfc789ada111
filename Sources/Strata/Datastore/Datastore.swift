import StrataCore

/// The instances of one format in a store. Each call runs in its own transaction; use
/// `store.read`/`store.write` with `tx[datastore]` to group calls (and to span datastores).
///
/// On a `Store<ReadOnly>` only reads exist: the write methods are declared for `ReadWrite` only.
public final class Datastore<F: DatastoreFormat, Access: StoreAccess>: Sendable {
    /// The store this datastore reads from and writes to.
    public let store: Store<Access>
    @usableFromInline let schema: DatastoreSchema<F>
    /// `store.database`, unretained, for the single-call loads: calling through `store.database`
    /// retained and released it around each call (two atomic read-modify-writes). It lives as
    /// long as `store`, which this datastore holds, so it is alive during any call on `self`.
    @usableFromInline let database: Unmanaged<Database>

    init(store: Store<Access>) throws {
        self.store = store
        database = Unmanaged.passUnretained(store.database)
        try F.fieldEvolution?.validate(datastore: F.name)
        // The declaration is checked before a rename can write anything.
        let declared = DatastoreSchema<F>()
        let equivalent = declared.equivalentIndexNames()
        guard equivalent.isEmpty else { throw DatastoreError.equivalentIndexNames(datastore: F.name, names: equivalent) }
        let name = try DatastoreRename.resolveName(of: F.self, in: store)
        schema = TreeName.same(name, F.name) ? declared : DatastoreSchema<F>(name: name)
        if Access.self == ReadWrite.self {
            try store.database.write { transaction in
                let context = StoreWriteContext(transaction: transaction, changeLogMemory: store.changeLogMemory)
                let stored = try schema.storedDescriptor(in: context)
                let primary = try context.writableTree(schema.layout.primary)
                let hasData = try transaction.count(primary) > 0
                schema.reconcile(with: stored, hasData: hasData)
                if stored == nil || !hasData {
                    // A new (or empty) datastore: its declaration is current by definition.
                    for info in schema.indexes { _ = try context.writableTree(info.tree) }
                    for dropped in schema.droppedIndexes.withLock({ $0 }) {
                        if let tree = try context.tree(schema.layout.index(dropped)) { try transaction.dropTree(tree) }
                    }
                    schema.droppedIndexes.withLock { $0 = [] }
                    if stored != schema.descriptor { try schema.writeDescriptor(in: context) }
                }
            }
        } else {
            try store.database.read { transaction in
                let context = StoreReadContext(transaction: transaction)
                let hasData = try context.tree(schema.layout.primary).map { try transaction.count($0) > 0 } ?? false
                schema.reconcile(with: try schema.storedDescriptor(in: context), hasData: hasData)
            }
        }
    }

    /// Indexes declared but not built for the stored data (call `warm(progress:)`).
    public var indexesNeedingBuild: Set<String> { schema.staleIndexNames }

    /// Number of instances, read from the primary tree without decoding any.
    public var count: Int { get throws { try store.read { try $0[self].count } } }

    /// The instance with identifier `id`, or nil. Throws `DatastoreError.corruptInstance`,
    /// `.versionTooNew` or `.migrationMissing` if the stored instance cannot be decoded.
    @inlinable public func load(_ id: F.Identifier) throws -> F.Instance? {
        // The optional is built here, specialized in the caller (see `DatastoreLookup`).
        var instance: F.Instance?
        try load(id) { instance = $0 }
        return instance
    }

    @inlinable func load(_ id: F.Identifier, found: (consuming F.Instance) -> Void) throws {
        // Inlined into the caller, where `F` is known: no look-ups of `F.Identifier`'s key
        // conformance per call. One lookup: a snapshot without the transaction and context objects of `store.read`, and
        // a key lent from the stack for fixed-width and short string identifiers (`withOrderedKeyBytes`).
        try database._withUnsafeGuaranteedRef { database in try database.withSnapshot { snapshot in
            try id.withOrderedKeyBytes { idBytes in
                assert(idBytes.elementsEqual(id.orderedKeyBytes), "\(F.Identifier.self).withOrderedKeyBytes lent other bytes than orderedKeyBytes")
                try DatastoreLookup.load(idBytes: idBytes, schema: schema, snapshot: snapshot, found: found)
            }
        } }
    }

    /// Every instance in identifier order (or descending), at most `limit` of them.
    /// Throws the decoding errors of `load(_:)`.
    public func loadAll(order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance] {
        try store.read { try $0[self].loadAll(order: order, limit: limit) }
    }

    /// Instances whose identifier lies in `range` (`a..<b`, `a...`, `IndexRange`, ...), in identifier order.
    /// Throws the decoding errors of `load(_:)`.
    public func load<R: IndexRangeExpression>(_ range: R, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance]
    where R.Bound == F.Identifier {
        try store.read { try $0[self].load(range, order: order, limit: limit) }
    }

    /// The instance a unique index maps `value` to, or nil.
    /// Throws `DatastoreError.unknownIndex` if the key path names no declared index,
    /// `.indexNotBuilt` if it awaits `warm(progress:)`, `.corruptIndexEntry` if the entry names a
    /// missing instance, and the decoding errors of `load(_:)`.
    /// ```swift
    /// let user = try users.load("ada@example.com", from: \.email)
    /// ```
    @inlinable public func load<I: UniqueIndexRepresentation>(_ value: I.Value, from index: KeyPath<F, I>) throws -> F.Instance?
    where I.Instance == F.Instance {
        // The optional is built here, specialized in the caller (see `DatastoreLookup`).
        var instance: F.Instance?
        try load(value, from: index) { instance = $0 }
        return instance
    }

    @usableFromInline func load<I: UniqueIndexRepresentation>(_ value: I.Value, from index: KeyPath<F, I>, found: (consuming F.Instance) -> Void) throws
    where I.Instance == F.Instance {
        let info = try schema.readTarget(index)
        // A snapshot without the transaction and context objects of `store.read`, and the value's
        // key lent from the stack where its type can (`withOrderedKeyBytes`).
        try value.withOrderedKeyBytes { valueBytes in
            assert(valueBytes.elementsEqual(value.orderedKeyBytes), "\(I.Value.self).withOrderedKeyBytes lent other bytes than orderedKeyBytes")
            try database._withUnsafeGuaranteedRef { database in try database.withSnapshot {
                try DatastoreLookup.load(uniqueValueBytes: valueBytes, index: info, schema: schema, in: $0, found: found)
            } }
        }
    }

    /// Every instance indexed under `value`, in identifier order (`order` reverses it). Throws
    /// `DatastoreError.unknownIndex`, `.indexNotBuilt`, `.corruptIndexEntry` and decoding errors.
    public func loadAll<I: IndexRepresentation>(_ value: I.Value, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try store.read { try $0[self].loadAll(value, from: index, order: order, limit: limit) }
    }

    /// Instances whose index value lies in `range`, by value then identifier; a many-valued index
    /// yields an instance once per matching value. Throws `DatastoreError.unknownIndex`,
    /// `.indexNotBuilt`, `.corruptIndexEntry` and decoding errors.
    /// ```swift
    /// let adults = try people.load(18..., from: \.age, limit: 100)
    /// ```
    public func load<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                                      limit: Int? = nil) throws -> [F.Instance]
    where I.Instance == F.Instance, R.Bound == I.Value {
        try store.read { try $0[self].load(range, from: index, order: order, limit: limit) }
    }

    /// Every instance in the order of `index` (pass `...` as the range). Throws
    /// `DatastoreError.unknownIndex`, `.indexNotBuilt`, `.corruptIndexEntry` and decoding errors.
    public func load<I: IndexRepresentation>(_ range: UnboundedRange, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                             limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try store.read { try $0[self].load(range, from: index, order: order, limit: limit) }
    }

    /// How many entries of `index` lie in `range`, without decoding instances (a many-valued index
    /// counts an instance once per matching value). Throws `DatastoreError.unknownIndex` or `.indexNotBuilt`.
    public func count<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>) throws -> Int
    where I.Instance == F.Instance, R.Bound == I.Value {
        try store.read { try $0[self].count(range, from: index) }
    }

    /// Loads on a background thread, never blocking the cooperative pool.
    public func load(_ id: F.Identifier) async throws -> F.Instance? where F.Identifier: Sendable {
        try await store.read { try $0[self].load(id) }
    }
}

extension Datastore where Access == ReadWrite {
    // Inlinable so that it is specialized for the caller's format: unspecialized, its
    // `F.Instance?` result cost a runtime generic-metadata look-up (~450 instructions) per call.
    // (Above the doc comment: an ordinary comment between it and the declaration would drop it.)

    /// Stores `instance` in its own write transaction (insert or replace), keeping every index exact;
    /// returns the instance it replaced. Throws `DatastoreError.uniqueIndexViolation` (nothing written),
    /// `.versionTooNew` if the stored instance it would replace was written by a newer build, and engine
    /// errors such as `StrataError.keyTooLarge`.
    @inlinable @discardableResult
    public func persist(_ instance: F.Instance) throws -> F.Instance? {
        try store.write { try $0[self].persist(instance) }
    }

    /// Stores a new instance in its own write transaction. Throws `DatastoreError.instanceExists` if its
    /// identifier is taken and `.uniqueIndexViolation` on a unique-index clash; nothing is written then.
    public func insert(_ instance: F.Instance) throws {
        try store.write { try $0[self].insert(instance) }
    }

    /// Deletes the instance with `id` (and its index entries) and returns it.
    /// Throws `DatastoreError.instanceNotFound` if there is none, and the decoding errors of
    /// `load(_:)` (the old instance is decoded to find its index entries).
    @discardableResult
    public func delete(_ id: F.Identifier) throws -> F.Instance {
        try store.write { try $0[self].delete(id) }
    }

    /// Deletes the instance with `id` if it exists and returns it, or nil. Throws the decoding
    /// errors of `load(_:)` (the old instance is decoded to find its index entries).
    @discardableResult
    public func deleteIfPresent(_ id: F.Identifier) throws -> F.Instance? {
        try store.write { try $0[self].deleteIfPresent(id) }
    }

    /// Deletes every instance whose value in `index` lies in `range`, in one transaction; returns how
    /// many. Throws `DatastoreError.unknownIndex`, `.indexNotBuilt` and decoding errors.
    @discardableResult
    public func delete<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>) throws -> Int
    where I.Instance == F.Instance, R.Bound == I.Value {
        try store.write { try $0[self].delete(range, from: index) }
    }

    /// Persists on the store's write queue (it blocks on fsync), never on the cooperative pool.
    @discardableResult
    public func persist(_ instance: F.Instance) async throws -> F.Instance? {
        try await store.write { try $0[self].persist(instance) }
    }

    /// `deleteIfPresent(_:)` on the store's write queue, never blocking the cooperative pool.
    @discardableResult
    public func deleteIfPresent(_ id: F.Identifier) async throws -> F.Instance? where F.Identifier: Sendable {
        try await store.write { try $0[self].deleteIfPresent(id) }
    }
}
