import StrataCore

extension Datastore {
    /// The instances whose index value lies in `range`, read and decoded as the consumer asks (a
    /// pull-based `DatastoreStream`: at most one batch in memory; see `StreamConsistency` for the
    /// snapshots read).
    public func stream<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                                        limit: Int? = nil, batchSize: Int = DatastoreStreamDefaults.batchSize,
                                                                        consistency: StreamConsistency = .perBatch) -> DatastoreStream<F>
    where I.Instance == F.Instance, R.Bound == I.Value {
        .indexed(self, index, KeyRange(range), order: order, limit: limit, batchSize: batchSize, consistency: consistency)
    }

    /// Every instance in the index's order, as a pull-based `DatastoreStream`.
    public func stream<I: IndexRepresentation>(_ range: UnboundedRange, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                               limit: Int? = nil, batchSize: Int = DatastoreStreamDefaults.batchSize,
                                               consistency: StreamConsistency = .perBatch) -> DatastoreStream<F> where I.Instance == F.Instance {
        .indexed(self, index, .everything, order: order, limit: limit, batchSize: batchSize, consistency: consistency)
    }

    /// The instances whose identifier lies in `range`, in identifier order, as a pull-based
    /// `DatastoreStream`.
    ///
    /// ```swift
    /// for try await event in events.stream(start..<end, order: .descending, limit: 50) { … }
    /// ```
    public func stream<R: IndexRangeExpression>(_ range: R, order: RangeOrder = .ascending, limit: Int? = nil,
                                                batchSize: Int = DatastoreStreamDefaults.batchSize,
                                                consistency: StreamConsistency = .perBatch) -> DatastoreStream<F> where R.Bound == F.Identifier {
        .primary(self, KeyRange(range), order: order, limit: limit, batchSize: batchSize, consistency: consistency)
    }

    /// Every instance in identifier order, as a pull-based `DatastoreStream`.
    public func streamAll(order: RangeOrder = .ascending, limit: Int? = nil, batchSize: Int = DatastoreStreamDefaults.batchSize,
                          consistency: StreamConsistency = .perBatch) -> DatastoreStream<F> {
        .primary(self, .everything, order: order, limit: limit, batchSize: batchSize, consistency: consistency)
    }
}

/// Defaults of `DatastoreStream`.
public enum DatastoreStreamDefaults {
    /// Instances per batch: about a page of small instances per short read transaction.
    public static let batchSize = 64
}
