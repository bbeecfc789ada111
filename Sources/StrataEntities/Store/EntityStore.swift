import Dispatch
import Foundation
import Strata
import StrataCore
import Synchronization

/// A schema-less entity store over a Strata store: entities of any type with any properties,
/// the full history of every property, relationships with a reverse index, and get-or-create
/// references. The writer opens it read-write (`EntityStore<ReadWrite>`); any number of
/// reader processes open it read-only (`EntityStore<ReadOnly>`) and see every commit without
/// reopening.
///
/// ```swift
/// let entities = try EntityStore(at: "people.strata")
/// let ada = EntityReference.named("Ada", ofType: "person").createIfMissing(with: ["born": 1815])
/// try await entities.set(["field": "mathematics"], of: [ada])
/// let found = try await entities.records([ada], keys: ["born", "field"])
/// ```
///
/// Every operation is one transaction; `read` and `write` run several in one. Every method is
/// async and runs its transaction off the cooperative pool (writes on one serial queue: they
/// wait for the writer lock and flush).
public final class EntityStore<Access: StoreAccess>: Sendable {
    public let database: Database
    let registry = EntityKindRegistry()
    /// The typed store this one was opened from, if any: kept alive with it (an in-memory
    /// store removes its directory when released).
    private let store: Store<Access>?
    private let writeQueue = DispatchQueue(label: "strata.entities.write")
    /// One more than the last generation a transaction of this handle found in this build's
    /// layout (`EntityLayout.checkVersion`), 0 before the first: transactions of that generation
    /// skip the check. Any other generation is checked again, because a writer of a later build
    /// may upgrade the store to a layout this build does not know while this handle stays open
    /// (a read-heavy handle mostly reads one generation; one lookup in `meta` per new one).
    private let layoutCheckedGeneration = Atomic<UInt64>(0)

    init(database: Database, store: Store<Access>? = nil) {
        self.database = database
        self.store = store
    }

    /// The entity store in the same store as `store`'s typed datastores (it may share
    /// transactions with nothing else, but lives beside them in the same files).
    public convenience init(store: Store<Access>) {
        self.init(database: store.database, store: store)
    }

    public var path: String { database.path }

    /// Refuses entities of another layout (`EntityError.unsupportedLayout`), once per generation
    /// this handle reads (see `layoutCheckedGeneration`).
    private func checkLayout(_ transaction: Transaction) throws {
        let generation = transaction.generation
        // A generation is immutable, so its layout never changes: one check is enough. (The
        // last generation is also the one a read-heavy handle sees over and over.)
        guard generation == .max || layoutCheckedGeneration.load(ordering: .relaxed) != generation + 1 else { return }
        try EntityLayout.checkVersion(in: transaction)
        if generation != .max { layoutCheckedGeneration.store(generation + 1, ordering: .relaxed) }
    }

    /// Registers a Swift type for its entity type: `objects` reads return entities of that type as it.
    public func register(_ kind: any EntityKind.Type) { registry.register(kind) }

    /// Runs `body` in one read transaction (one committed snapshot), off the cooperative pool.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (EntityReadContext) throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Swift.Result { try self.readNow(body) })
            }
        }
    }

    /// Runs `body` in one read transaction on the caller's thread (for code that is not async).
    /// Stored bytes that do not decode are `EntityError.corrupt`; so is an `OrderedKeyError` that
    /// `body` throws itself (the store cannot tell it from its own decoding).
    public func readNow<Result>(_ body: (EntityReadContext) throws -> Result) throws -> Result {
        try EntityError.reportingDamage {
            try database.read { transaction in
                try checkLayout(transaction)
                return try body(EntityReadContext(transaction: transaction, registry: registry))
            }
        }
    }

    // MARK: One-transaction reads

    /// See `EntityReadContext.records(_:keys:)`.
    public func records(_ references: [EntityReference], keys: [String]? = nil) async throws -> [EntityReference: EntityRecord] {
        try await read { try $0.records(references, keys: keys) }
    }

    /// See `EntityReadContext.existing(_:)` (never creates).
    public func resolve(existing references: [EntityReference]) async throws -> [EntityReference: EntityID] {
        try await read { try $0.existing(references) }
    }

    /// See `EntityReadContext.history(of:key:)`.
    public func history(of reference: EntityReference, key: String) async throws -> [PropertyEntry] {
        try await read { try $0.history(of: reference, key: key) }
    }

    /// See `EntityReadContext.value(of:key:asOf:)`.
    public func value(of reference: EntityReference, key: String, asOf date: Date) async throws -> EntityValue? {
        try await read { try $0.value(of: reference, key: key, asOf: date) }
    }

    /// See `EntityReadContext.entities(ofType:limit:order:)`.
    public func entities(ofType type: String, limit: Int? = nil, order: EntityOrder = .ascending) async throws -> [EntityID] {
        try await read { try $0.entities(ofType: type, limit: limit, order: order) }
    }

    /// See `EntityReadContext.entities(where:equals:ofType:limit:order:)`.
    public func entities(where key: String, equals value: EntityValue, ofType type: String? = nil,
                         limit: Int? = nil, order: EntityOrder = .ascending) async throws -> [EntityID] {
        try await read { try $0.entities(where: key, equals: value, ofType: type, limit: limit, order: order) }
    }

    /// See `EntityReadContext.entities(where:in:ofType:limit:order:)`.
    public func entities(where key: String, in range: EntityValueRange, ofType type: String? = nil,
                         limit: Int? = nil, order: EntityOrder = .ascending) async throws -> [EntityID] {
        try await read { try $0.entities(where: key, in: range, ofType: type, limit: limit, order: order) }
    }

    /// See `EntityReadContext.referrers(to:through:)`.
    public func referrers(to reference: EntityReference, through key: String? = nil) async throws -> [EntityLink] {
        try await read { try $0.referrers(to: reference, through: key) }
    }

    /// See `EntityReadContext.objects(_:keys:)`.
    public func objects(_ references: [EntityReference], keys: [String]? = nil) async throws -> [EntityReference: any EntityKind] {
        try await read { try $0.objects(references, keys: keys) }
    }

    /// See `EntityReadContext.objects(_:keys:limit:order:)`.
    public func objects<K: EntityKind>(_ kind: K.Type, keys: [String]? = nil, limit: Int? = nil, order: EntityOrder = .ascending) async throws -> [K] {
        try await read { try $0.objects(kind, keys: keys, limit: limit, order: order) }
    }
}

extension EntityStore where Access == ReadWrite {
    /// Opens the store at `path` for writing, creating it if missing.
    /// - Throws: `StrataError` (e.g. `writerLocked` when another process writes it).
    public convenience init(at path: String, options: DatabaseOptions = DatabaseOptions()) throws {
        self.init(database: try Database(path: path, mode: .readWrite, options: options), store: nil)
    }

    /// The entity store of an open read-write database (it may also hold typed datastores).
    /// - Throws: `EntityError.readOnly` when `database` was opened read-only.
    public convenience init(database: Database) throws {
        guard database.mode == .readWrite else { throw EntityError.readOnly(path: database.path) }
        self.init(database: database, store: nil)
    }

    /// A store in memory (a private directory on tmpfs when available, no syncs), removed when
    /// released: the same engine and API, for tests.
    public static func inMemory() throws -> EntityStore<ReadWrite> {
        EntityStore(store: try Store.inMemory())
    }

    /// Runs `body` in one write transaction: it commits as one generation when `body` returns
    /// and writes nothing if it throws. Runs on the store's write queue, off the cooperative
    /// pool; a task cancelled before the commit rolls back and throws `CancellationError`.
    ///
    /// ```swift
    /// let report = try await entities.write { tx in
    ///     let ids = try tx.resolve([ada, book])
    ///     try tx.relate([book], key: "author", to: ada)
    ///     return try tx.delete([.id(ids[old]!)])
    /// }
    /// ```
    public func write<Result: Sendable>(at datestamp: Date = Date(), _ body: @escaping @Sendable (EntityWriteContext) throws -> Result) async throws -> Result {
        let cancelled = Mutex(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                writeQueue.async {
                    continuation.resume(with: Swift.Result {
                        try self.writeNow(at: datestamp) { context in
                            let result = try body(context)
                            if cancelled.withLock({ $0 }) { throw CancellationError() }
                            return result
                        }
                    })
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    /// Runs `body` in one write transaction on the caller's thread (for code that is not async;
    /// it blocks on the writer lock and the flush). Stored bytes that do not decode are
    /// `EntityError.corrupt`, as in `readNow`; a NaN `datestamp` is `EntityError.invalidDatestamp`
    /// (nothing is written).
    public func writeNow<Result>(at datestamp: Date = Date(), _ body: (EntityWriteContext) throws -> Result) throws -> Result {
        try EntityError.checkDatestamp(datestamp, "the write's datestamp")
        return try EntityError.reportingDamage {
            try database.write { transaction in
                try checkLayout(transaction)
                let context = EntityWriteContext(transaction: transaction, registry: registry, datestamp: datestamp)
                let result = try body(context)
                try context.finish()
                return result
            }
        }
    }

    // MARK: One-transaction writes

    /// See `EntityWriteContext.resolve(_:)` (creates what the references say to create).
    @discardableResult
    public func resolve(_ references: [EntityReference]) async throws -> [EntityReference: EntityID] {
        try await write { try $0.resolve(references) }
    }

    /// See `EntityWriteContext.set(_:of:at:)`.
    @discardableResult
    public func set(_ properties: [String: EntityValue], of references: [EntityReference], at datestamp: Date? = nil) async throws -> [EntityReference: EntityID] {
        try await write { try $0.set(properties, of: references, at: datestamp) }
    }

    /// See `EntityWriteContext.set(_:to:of:at:)`.
    @discardableResult
    public func set(_ key: String, to value: EntityValue, of reference: EntityReference, at datestamp: Date? = nil) async throws -> EntityID {
        try await write { try $0.set(key, to: value, of: reference, at: datestamp) }
    }

    /// See `EntityWriteContext.set(_:at:)`.
    @discardableResult
    public func set(_ changes: [EntityReference: [String: EntityValue]], at datestamp: Date? = nil) async throws -> [EntityReference: EntityID] {
        try await write { try $0.set(changes, at: datestamp) }
    }

    /// See `EntityWriteContext.add(_:to:)`.
    @discardableResult
    public func add(_ entries: [String: [PropertyEntry]], to reference: EntityReference) async throws -> EntityID {
        try await write { try $0.add(entries, to: reference) }
    }

    /// See `EntityWriteContext.relate(_:key:to:at:)`.
    @discardableResult
    public func relate(_ references: [EntityReference], key: String, to target: EntityReference, at datestamp: Date? = nil) async throws -> EntityID {
        try await write { try $0.relate(references, key: key, to: target, at: datestamp) }
    }

    /// See `EntityWriteContext.remove(_:of:at:)`.
    @discardableResult
    public func remove(_ keys: [String], of references: [EntityReference], at datestamp: Date? = nil) async throws -> [EntityReference: EntityID] {
        try await write { try $0.remove(keys, of: references, at: datestamp) }
    }

    /// See `EntityWriteContext.delete(_:at:)` (and its rule for relationships).
    @discardableResult
    public func delete(_ references: [EntityReference], at datestamp: Date? = nil) async throws -> EntityDeletionReport {
        try await write { try $0.delete(references, at: datestamp) }
    }

    /// See `EntityWriteContext.compactHistory(before:)`.
    @discardableResult
    public func compactHistory(before date: Date) async throws -> Int {
        try await write { try $0.compactHistory(before: date) }
    }
}

extension EntityStore where Access == ReadOnly {
    /// Opens an existing store for reading only. It sees every commit of the writer process
    /// without reopening; an empty store (no entity written yet) reads as empty.
    public convenience init(at path: String, mode: ReadOnlyMode, options: DatabaseOptions = DatabaseOptions()) throws {
        self.init(database: try Database(path: path, mode: .readOnly, options: options), store: nil)
    }

    /// The entity store of an open database, read only.
    public convenience init(readingFrom database: Database) {
        self.init(database: database, store: nil)
    }
}
