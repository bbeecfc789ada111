import StrataCore
import Synchronization

/// A change subscription and the snapshot its events start after, taken when a `DatastoreChanges`
/// is made, so no commit between that call and the first `next()` is missed.
final class ObservationStart: @unchecked Sendable {
    // `ReadTransaction` is not Sendable; the snapshot is handed to exactly one iterator, under
    // the lock, and only that iterator uses it afterwards.
    struct Subscription: @unchecked Sendable {
        let stream: ChangeStream
        let snapshot: ReadTransaction
    }

    private let database: Database
    private let tree: String
    private let prepared: Mutex<Result<Subscription, Error>?>

    /// Subscribes now; `snapshot` (already open) is where events start, else the newest commit.
    init(database: Database, tree: String, snapshot: ReadTransaction?) {
        self.database = database
        self.tree = tree
        prepared = Mutex(ObservationStart.subscribe(database, tree, snapshot))
    }

    deinit {
        if case .success(let subscription)? = prepared.withLock({ $0 }) { subscription.snapshot.end() }
    }

    private static func subscribe(_ database: Database, _ tree: String, _ snapshot: ReadTransaction?) -> Result<Subscription, Error> {
        // Subscribe first, then take the snapshot: a commit in between is both in the snapshot and
        // signalled, and the iterator skips signals of generations it already has.
        Result {
            let stream = try database.changes(trees: [tree])
            return Subscription(stream: stream, snapshot: try snapshot ?? database.beginRead())
        }
    }

    /// The prepared subscription for the first iterator; a fresh one for any later iterator.
    func take() -> Result<Subscription, Error> {
        let first = prepared.withLock { prepared -> Result<Subscription, Error>? in
            defer { prepared = nil }
            return prepared
        }
        return first ?? ObservationStart.subscribe(database, tree, nil)
    }
}

/// The instances of a datastore as of one generation, and every change committed after it.
public struct DatastoreObservation<F: DatastoreFormat> {
    /// The generation `initial` was read at; `changes` reports every commit after it.
    public let generation: UInt64
    /// Every instance as of `generation`, in identifier order.
    public let initial: [F.Instance]
    /// Created / updated / deleted events of every commit after `generation`, in order.
    public let changes: DatastoreChanges<F>
}

extension Datastore {
    /// The current instances and then every change after them, with no gap and no overlap: the
    /// initial value and the start of `changes` are one snapshot (as GRDB's `ValueObservation`
    /// starts from a fetched value). The subscription starts in this call.
    ///
    /// ```swift
    /// let observation = try books.observe()
    /// var shelf = Dictionary(uniqueKeysWithValues: observation.initial.map { ($0.id, $0) })
    /// for try await event in observation.changes { apply(event, to: &shelf) }
    /// ```
    /// Throws what a read throws (`StrataError`, `DatastoreError` for damaged instances).
    public func observe() throws -> DatastoreObservation<F> {
        let snapshot = try store.database.beginRead()
        do {
            let initial = try DatastoreReader(context: StoreReadContext(transaction: snapshot), schema: schema).loadAll()
            let changes = DatastoreChanges(database: store.database, schema: schema, from: snapshot) { _, _, _ in true }
            return DatastoreObservation(generation: snapshot.generation, initial: initial, changes: changes)
        } catch {
            snapshot.end()
            throw error
        }
    }
}
