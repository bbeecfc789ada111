import StrataCore

/// The instances of one format in a store. Each call runs in its own transaction; use
/// `store.read`/`store.write` with `tx[datastore]` to group calls (and to span datastores).
///
/// On a `Store<ReadOnly>` only reads exist: the write methods are declared for `ReadWrite` only.
public final class Datastore<F: DatastoreFormat, Access: StoreAccess>: Sendable {
    public let store: Store<Access>
    let schema: DatastoreSchema<F>

    init(store: Store<Access>) throws {
        self.store = store
        try F.fieldEvolution?.validate(datastore: F.name)
        schema = DatastoreSchema<F>(name: try DatastoreRename.resolveName(of: F.self, in: store))
        if Access.self == ReadWrite.self {
            try store.database.write { transaction in
                let context = StoreWriteContext(transaction: transaction)
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
    public var indexesNeedingBuild: Set<String> { schema.staleIndexes.withLock { $0 } }

    public var count: Int { get throws { try store.read { try $0[self].count } } }

    public func load(_ id: F.Identifier) throws -> F.Instance? {
        // One lookup: a snapshot without the transaction and context objects of `store.read`.
        let key = id.orderedKeyBytes
        return try store.database.withSnapshot { snapshot in
            guard let envelope = try snapshot.get(key, inTree: schema.layout.primary) else { return nil }
            return try schema.decode(envelope, id: key)
        }
    }

    public func loadAll(order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance] {
        try store.read { try $0[self].loadAll(order: order, limit: limit) }
    }

    public func load<R: IndexRangeExpression>(_ range: R, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance]
    where R.Bound == F.Identifier {
        try store.read { try $0[self].load(range, order: order, limit: limit) }
    }

    public func load<I: UniqueIndexRepresentation>(_ value: I.Value, from index: KeyPath<F, I>) throws -> F.Instance?
    where I.Instance == F.Instance {
        // At most one entry, then at most one lookup: a snapshot without the transaction and
        // context objects of `store.read` (same steps as `DatastoreReader.forEachIndexed`).
        let info = try schema.index(index)
        let range = KeyRange.prefixed(value.orderedKeyBytes)
        return try store.database.withSnapshot { snapshot in
            var found: F.Instance?
            try snapshot.scan(inTree: info.tree, from: range.lower, to: range.upper) { key, value in
                let idBytes = try key.withUnsafeBytes {
                    Array(try DatastoreReader<F>.identifierBytes(inIndexKey: $0, valueType: I.Value.self, index: info.name))
                }
                guard let envelope = info.isDirect ? value : try snapshot.get(idBytes, inTree: schema.layout.primary) else {
                    throw DatastoreError.corruptIndexEntry(datastore: F.name, index: info.name, reason: "it names a missing instance")
                }
                found = try schema.decode(envelope, id: idBytes)
                return false
            }
            return found
        }
    }

    public func loadAll<I: IndexRepresentation>(_ value: I.Value, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try store.read { try $0[self].loadAll(value, from: index, order: order, limit: limit) }
    }

    public func load<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                                      limit: Int? = nil) throws -> [F.Instance]
    where I.Instance == F.Instance, R.Bound == I.Value {
        try store.read { try $0[self].load(range, from: index, order: order, limit: limit) }
    }

    public func load<I: IndexRepresentation>(_ range: UnboundedRange, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                             limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try store.read { try $0[self].load(range, from: index, order: order, limit: limit) }
    }

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
    @discardableResult
    public func persist(_ instance: F.Instance) throws -> F.Instance? {
        try store.write { try $0[self].persist(instance) }
    }

    public func insert(_ instance: F.Instance) throws {
        try store.write { try $0[self].insert(instance) }
    }

    @discardableResult
    public func delete(_ id: F.Identifier) throws -> F.Instance {
        try store.write { try $0[self].delete(id) }
    }

    @discardableResult
    public func deleteIfPresent(_ id: F.Identifier) throws -> F.Instance? {
        try store.write { try $0[self].deleteIfPresent(id) }
    }

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

    @discardableResult
    public func deleteIfPresent(_ id: F.Identifier) async throws -> F.Instance? where F.Identifier: Sendable {
        try await store.write { try $0[self].deleteIfPresent(id) }
    }
}
