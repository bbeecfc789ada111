extension Store where Access == ReadWrite {
    /// The datastore described by `format`, with every index that is declared but not built for
    /// the stored data (a new index, or a changed one: `indexesNeedingBuild`) built before it is
    /// returned, reporting through `progress`. For a program whose new version adds an index:
    /// queries on it work at once instead of throwing `DatastoreError.indexNotBuilt` until
    /// `warm(progress:)`. Building is one write transaction over every instance; when nothing
    /// needs building this costs what `datastore(_:)` costs and `progress` is not called.
    ///
    /// ```swift
    /// let books = try store.datastore(BookFormat.self) { progress in
    ///     if case .working(let done, let total) = progress { print("indexing \(done)/\(total)") }
    /// }
    /// ```
    public func datastore<F: DatastoreFormat>(_ format: F.Type, warming progress: (DatastoreProgress) -> Void) throws -> Datastore<F, ReadWrite> {
        let datastore = try datastore(format)
        if !datastore.indexesNeedingBuild.isEmpty || !datastore.schema.droppedIndexes.withLock({ $0.isEmpty }) {
            try datastore.warm(progress: progress)
        }
        return datastore
    }
}
