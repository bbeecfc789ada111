import Dispatch
import StrataCore

/// Which snapshot(s) a `DatastoreStream` reads.
public enum StreamConsistency: Sendable {
    /// Each batch is read in its own short read transaction, on the newest committed generation
    /// at the time the consumer asks for it. Nothing is pinned between batches (the writer may
    /// reuse any page meanwhile), so a long stream costs the store nothing; but it is not one
    /// consistent snapshot: an instance changed between two batches appears as it was when its
    /// batch was read, and one moved across the resume point (an index value changed) can be
    /// missed or seen twice. Every key is visited in order, each at most once per position.
    case perBatch
    /// One read transaction from the first batch to the end of the stream (or until the
    /// iterator is dropped): every instance comes from the same committed generation. It pins
    /// that generation's pages for as long as the stream is being consumed (the writer cannot
    /// reuse them; the file grows instead), so use it for streams consumed promptly.
    case snapshot
}

/// Instances read and decoded as the consumer asks for them: a pull-based `AsyncSequence`.
///
/// Instances are read in batches of `batchSize` (about a page's worth by default), each batch on
/// a Dispatch thread (page faults may block; the cooperative pool never does), resuming after the
/// last key read. At most one batch of decoded instances is held at a time, whatever the length of
/// the range. See `StreamConsistency` for which snapshots are read and what is pinned.
/// A consumer that stops early (breaks out, or drops the iterator) ends the stream; cancelling the
/// consuming task makes the next `next()` throw `CancellationError`.
///
/// ```swift
/// for try await book in books.stream("A"..<"B", from: \.title) { … }
/// for try await book in books.streamAll(order: .descending, limit: 100) { … }
/// ```
public struct DatastoreStream<F: DatastoreFormat>: AsyncSequence, Sendable {
    public typealias Element = F.Instance

    /// Reads one batch: up to `count` instances of `range` in `order`, and the key of the last
    /// entry read (where the next batch resumes; nil when the range is exhausted).
    typealias BatchReader = @Sendable (_ reader: DatastoreReader<F>, _ range: KeyRange, _ order: RangeOrder, _ count: Int) throws
        -> (instances: [F.Instance], lastKey: [UInt8]?)

    let database: Database
    let schema: DatastoreSchema<F>
    let range: KeyRange
    let order: RangeOrder
    let limit: Int?
    let batchSize: Int
    let consistency: StreamConsistency
    let readBatch: BatchReader
    /// An error known before iteration (an unknown or unbuilt index): thrown by the first `next()`.
    var failure: (any Error)?

    /// A new iteration from the start of the range (each iterator reads on its own).
    public func makeAsyncIterator() -> Iterator {
        Iterator(state: StreamState(stream: self))
    }

    /// Reads the next batch when the one in hand is used up.
    public struct Iterator: AsyncIteratorProtocol {
        let state: StreamState<F>

        /// The next instance; nil at the end of the range or limit. Throws what reading or
        /// decoding throws, or `CancellationError` if the task is cancelled before a batch read.
        public mutating func next() async throws -> F.Instance? {
            try await state.next()
        }
    }
}

/// The iterator's state. Owned by one iterator (iterated by one task at a time); handed to a
/// Dispatch thread for each batch read and back.
final class StreamState<F: DatastoreFormat>: @unchecked Sendable {
    private let stream: DatastoreStream<F>
    private var range: KeyRange
    private var remaining: Int
    private var buffer: [F.Instance] = []
    private var position = 0
    private var exhausted = false
    /// The one transaction of a `.snapshot` stream, from its first batch on.
    private var snapshot: ReadTransaction?

    init(stream: DatastoreStream<F>) {
        self.stream = stream
        range = stream.range
        remaining = stream.limit ?? .max
        exhausted = range.isEmpty || remaining <= 0
    }

    deinit { snapshot?.end() }

    func next() async throws -> F.Instance? {
        if let failure = stream.failure { throw failure }
        if position == buffer.count {
            guard !exhausted else { return nil }
            try Task.checkCancellation()
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                DispatchQueue.global().async { continuation.resume(with: Result { try self.readNextBatch() }) }
            }
            guard position < buffer.count else { return nil }
        }
        defer { position += 1 }
        return buffer[position]
    }

    /// Replaces the buffer with the next batch and moves the resume point past it.
    private func readNextBatch() throws {
        buffer = []
        position = 0
        let count = min(stream.batchSize, remaining)
        let batch: (instances: [F.Instance], lastKey: [UInt8]?)
        switch stream.consistency {
        case .perBatch:
            batch = try stream.database.read { transaction in
                try stream.readBatch(DatastoreReader(context: StoreReadContext(transaction: transaction), schema: stream.schema),
                                     range, stream.order, count)
            }
        case .snapshot:
            if snapshot == nil { snapshot = try stream.database.beginRead() }
            batch = try stream.readBatch(DatastoreReader(context: StoreReadContext(transaction: snapshot!), schema: stream.schema),
                                         range, stream.order, count)
        }
        buffer = batch.instances
        remaining -= batch.instances.count
        if let lastKey = batch.lastKey, batch.instances.count == count, remaining > 0 {
            // Strictly after the last key: ascending, its successor (the key followed by a zero
            // byte); descending, below it (upper bounds are exclusive).
            switch stream.order {
            case .ascending: range.lower = lastKey + [0]
            case .descending: range.upper = lastKey
            }
            exhausted = range.isEmpty
        } else {
            exhausted = true
        }
        if exhausted {
            snapshot?.end()
            snapshot = nil
        }
    }
}

extension DatastoreStream {
    /// Instances of the primary tree (identifier order).
    static func primary(_ datastore: Datastore<F, some StoreAccess>, _ range: KeyRange, order: RangeOrder, limit: Int?, batchSize: Int,
                        consistency: StreamConsistency) -> DatastoreStream {
        DatastoreStream(database: datastore.store.database, schema: datastore.schema, range: range, order: order, limit: limit,
                        batchSize: Swift.max(1, batchSize), consistency: consistency, readBatch: { reader, range, order, count in
            var instances: [F.Instance] = []
            instances.reserveCapacity(count)
            var lastKey: [UInt8]?
            try reader.scan(reader.layout.primary, range, order: order, limit: count) { key, envelope in
                instances.append(try reader.decode(envelope, id: key.bytes))
                lastKey = key.bytes
            }
            return (instances, lastKey)
        }, failure: nil)
    }

    /// Instances an index range reaches (index order: value, then identifier).
    static func indexed<I: IndexRepresentation>(_ datastore: Datastore<F, some StoreAccess>, _ index: KeyPath<F, I>, _ range: KeyRange,
                                                order: RangeOrder, limit: Int?, batchSize: Int, consistency: StreamConsistency)
    -> DatastoreStream where I.Instance == F.Instance {
        let info: IndexInfo<F.Instance>?
        var failure: (any Error)?
        do { (info, failure) = (try datastore.schema.index(index), nil) } catch { (info, failure) = (nil, error) }
        return DatastoreStream(database: datastore.store.database, schema: datastore.schema, range: range, order: order, limit: limit,
                               batchSize: Swift.max(1, batchSize), consistency: consistency, readBatch: { reader, range, order, count in
            guard let info else { return ([], nil) }
            var instances: [F.Instance] = []
            instances.reserveCapacity(count)
            var lastKey: [UInt8]?
            try DatastoreReader<F>.forEachIndexed(info, range, valueType: I.Value.self, order: order, limit: count,
                                                  schema: reader.schema, in: reader.context) { instance, key in
                instances.append(instance)
                lastKey = key.bytes
            }
            return (instances, lastKey)
        }, failure: failure)
    }
}
