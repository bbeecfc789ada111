import StrataCore

/// Created / updated / deleted events of one datastore, from commits of any process.
///
/// How it works: every write appends `(generation, sequence) -> identifier` to the datastore's
/// change log. The observer keeps a read snapshot at the generation it has reported; when the
/// process's poller signals that the log changed, it opens the new snapshot, reads the log entries
/// in between, and compares each identifier's instance in the old and the new snapshot. Several
/// changes to one instance between two polls coalesce into one event (created then deleted: none).
/// Holding the old snapshot is also what keeps the log entries it still needs from being trimmed.
///
/// The subscription starts when the sequence is made (`changes()`), not when it is iterated:
/// every commit after that call is reported by its first iterator. Later iterators start when
/// they are made. For a starting value with no gap before the first change, see `observe()`.
public struct DatastoreChanges<F: DatastoreFormat>: AsyncSequence {
    /// One instance created (its new value), updated (old and new) or deleted (its old value).
    public typealias Element = ObservedEvent<F.Identifier, F.Instance>

    let database: Database
    let schema: DatastoreSchema<F>
    let filter: @Sendable (F.Identifier, F.Instance?, F.Instance?) -> Bool
    /// The subscription and snapshot taken when the sequence was made, for its first iterator.
    let start: ObservationStart

    init(database: Database, schema: DatastoreSchema<F>, from snapshot: ReadTransaction? = nil,
         filter: @escaping @Sendable (F.Identifier, F.Instance?, F.Instance?) -> Bool) {
        self.database = database
        self.schema = schema
        self.filter = filter
        start = ObservationStart(database: database, tree: schema.layout.log, snapshot: snapshot)
    }

    /// The first iterator reports every commit after `changes()` was called; later ones start when made.
    public func makeAsyncIterator() -> Iterator {
        Iterator(database: database, schema: schema, filter: filter, start: start.take())
    }

    /// Follows the datastore's change log from the snapshot it holds.
    public struct Iterator: AsyncIteratorProtocol {
        let database: Database
        let schema: DatastoreSchema<F>
        let filter: @Sendable (F.Identifier, F.Instance?, F.Instance?) -> Bool
        private var stream: ChangeStream?
        private var streamIterator: ChangeStream.AsyncIterator?
        private var snapshot: ReadTransaction?
        private var buffered: [Element] = []
        private var failure: Error?

        init(database: Database, schema: DatastoreSchema<F>, filter: @escaping @Sendable (F.Identifier, F.Instance?, F.Instance?) -> Bool,
             start: Result<ObservationStart.Subscription, Error>) {
            self.database = database
            self.schema = schema
            self.filter = filter
            switch start {
            case .success(let subscription):
                stream = subscription.stream
                streamIterator = subscription.stream.makeAsyncIterator()
                snapshot = subscription.snapshot
            case .failure(let error):
                failure = error
            }
        }

        /// The next event, waiting for a commit that touches the datastore; nil when the change stream
        /// ends (the handle was closed or the task cancelled). Throws the error that kept the
        /// subscription from starting (e.g. `StrataError.closed`), the one that ended the stream
        /// (`ChangeStream.failure`: the store's newest commits could not be read, e.g. a damaged
        /// catalog), `DatastoreError.corruptLogEntry` for an unreadable log entry, and the decoding
        /// errors of `Datastore.load(_:)`.
        public mutating func next() async throws -> Element? {
            if let failure { throw failure }
            while buffered.isEmpty {
                guard let event = await streamIterator?.next() else {
                    snapshot?.end()
                    if let ended = stream?.failure { throw ended }
                    return nil
                }
                try collect(upTo: event.generation)
            }
            return buffered.removeFirst()
        }

        private mutating func collect(upTo generation: UInt64) throws {
            guard let old = snapshot else { return }
            let new = try database.beginRead()
            guard new.generation > old.generation else {
                new.end()
                return
            }
            let oldContext = StoreReadContext(transaction: old)
            let newContext = StoreReadContext(transaction: new)
            var identifiers: [[UInt8]] = []
            var seen = Set<[UInt8]>()
            if let log = try new.treeIfPresent(schema.layout.log) {
                try new.scan(log, from: ChangeLogKey.start(of: old.generation + 1)) { key, value in
                    let idBytes = Array(value.bytes.dropFirst())
                    guard value.count > 1, (try? F.Identifier(orderedKeyBytes: idBytes)) != nil else {
                        let generation = key.withUnsafeBytes { ChangeLogKey.generation(of: $0) } ?? 0
                        throw DatastoreError.corruptLogEntry(datastore: F.name, generation: generation,
                                                             reason: "entry \(hexBytes(value.bytes)) does not name an identifier")
                    }
                    if seen.insert(idBytes).inserted { identifiers.append(idBytes) }
                    return true
                }
            }
            let oldReader = DatastoreReader(context: oldContext, schema: schema)
            let newReader = DatastoreReader(context: newContext, schema: schema)
            for idBytes in identifiers {
                let id = try F.Identifier(orderedKeyBytes: idBytes)
                let before = try oldReader.load(idBytes: idBytes)
                let after = try newReader.load(idBytes: idBytes)
                guard filter(id, before, after) else { continue }
                switch (before, after) {
                case (nil, let created?): buffered.append(.created(id: id, newEntry: created))
                case (let previous?, let current?): buffered.append(.updated(id: id, oldEntry: previous, newEntry: current))
                case (let previous?, nil): buffered.append(.deleted(id: id, oldEntry: previous))
                case (nil, nil): break
                }
            }
            old.end()
            snapshot = new
        }
    }
}

extension Datastore {
    /// Every change to this datastore, from any process, as it is committed.
    public func changes() -> DatastoreChanges<F> {
        DatastoreChanges(database: store.database, schema: schema) { _, _, _ in true }
    }

    /// Changes to the instance with `id`.
    public func changes(for id: F.Identifier) -> DatastoreChanges<F> where F.Identifier: Sendable {
        DatastoreChanges(database: store.database, schema: schema) { changed, _, _ in changed == id }
    }

    /// Changes to instances whose index value lies in `range` before or after the change.
    public func changes<I: IndexRepresentation, R: IndexRangeExpression>(in range: R, from index: KeyPath<F, I>) throws -> DatastoreChanges<F>
    where I.Instance == F.Instance, R.Bound == I.Value {
        let definition = try schema.index(index, forReading: false).definition
        let keys = KeyRange(range)
        let matches: @Sendable (F.Instance?) -> Bool = { instance in
            guard let instance else { return false }
            return definition.encodedValues(of: instance).contains { value in
                if let lower = keys.lower, value.lexicographicallyPrecedes(lower) { return false }
                if let upper = keys.upper, !value.lexicographicallyPrecedes(upper) { return false }
                return true
            }
        }
        return DatastoreChanges(database: store.database, schema: schema) { _, before, after in matches(before) || matches(after) }
    }
}
