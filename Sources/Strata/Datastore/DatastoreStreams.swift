import Dispatch
import StrataCore

extension Datastore {
    /// The instances whose index value lies in `range`, as an `AsyncSequence`: one read snapshot,
    /// scanned on a background thread (never the cooperative pool) and delivered as they are
    /// decoded. Cancelling the consuming task stops the scan.
    public func stream<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                                        limit: Int? = nil) -> AsyncThrowingStream<F.Instance, Error>
    where I.Instance == F.Instance, R.Bound == I.Value {
        indexStream(KeyRange(range), from: index, order: order, limit: limit)
    }

    /// Every instance in the index's order, as an `AsyncSequence`.
    public func stream<I: IndexRepresentation>(_ range: UnboundedRange, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                               limit: Int? = nil) -> AsyncThrowingStream<F.Instance, Error> where I.Instance == F.Instance {
        indexStream(.everything, from: index, order: order, limit: limit)
    }

    private func indexStream<I: IndexRepresentation>(_ keys: KeyRange, from index: KeyPath<F, I>, order: RangeOrder, limit: Int?)
    -> AsyncThrowingStream<F.Instance, Error> where I.Instance == F.Instance {
        let info: IndexInfo<F.Instance>
        do { info = try schema.index(index) } catch { return AsyncThrowingStream { throw error } }
        return stream { reader, deliver in
            try reader.forEachIndexed(info, keys, valueType: I.Value.self, order: order, limit: limit, deliver)
        }
    }

    /// Every instance in identifier order, as an `AsyncSequence` (see `stream(_:from:)`).
    public func streamAll(order: RangeOrder = .ascending) -> AsyncThrowingStream<F.Instance, Error> {
        stream { reader, deliver in
            try reader.scan(reader.layout.primary, .everything, order: order, limit: nil) { key, envelope in
                guard try deliver(try reader.decode(envelope, id: key.bytes)) else { throw StreamStopped() }
            }
        }
    }

    private struct StreamStopped: Error {}

    private func stream(_ produce: @escaping @Sendable (DatastoreReader<F>, (F.Instance) throws -> Bool) throws -> Void)
    -> AsyncThrowingStream<F.Instance, Error> {
        let (stream, continuation) = AsyncThrowingStream<F.Instance, Error>.makeStream()
        let cancelled = CancellationFlag()
        continuation.onTermination = { _ in cancelled.set() }
        DispatchQueue.global().async {
            do {
                try self.store.read { context in
                    try produce(context[self]) { instance in
                        continuation.yield(instance)
                        return !cancelled.isSet
                    }
                }
                continuation.finish()
            } catch is StreamStopped {
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return stream
    }
}
