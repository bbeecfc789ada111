import StrataCore

extension Datastore {
    /// Runs `body` on this datastore in one read transaction whose body may `await` (see
    /// `Store.read(isolation:_:)`: one snapshot, pinned until `body` returns).
    ///
    /// ```swift
    /// let titles = try await books.read { reader in try reader.loadAll().map(\.title) }
    /// ```
    @discardableResult
    public func read<Result>(isolation: isolated (any Actor)? = #isolation,
                             _ body: (DatastoreReader<F>) async throws -> Result) async throws -> Result {
        try await store.read(isolation: isolation) { context in try await body(context[self]) }
    }
}

extension Datastore where Access == ReadWrite {
    /// Runs `body` on this datastore in one write transaction whose body may `await` (see
    /// `Store.write(isolation:_:)`: the writer lock is held across suspensions; a throw or a
    /// cancellation before the commit writes nothing).
    ///
    /// ```swift
    /// try await books.write { writer in
    ///     for book in try await feed.nextPage() { try writer.persist(book) }
    /// }
    /// ```
    @discardableResult
    public func write<Result>(isolation: isolated (any Actor)? = #isolation,
                              _ body: (DatastoreWriter<F>) async throws -> Result) async throws -> Result {
        try await store.write(isolation: isolation) { context in try await body(context[self]) }
    }
}
