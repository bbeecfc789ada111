import StrataCore

extension StoreWriteContext {
    /// Runs `body` as a savepoint (a nested transaction of the engine, `WriteTransaction.nested`):
    /// if `body` throws, everything it wrote through this context — instances, index entries,
    /// change-log records — is rolled back and the error rethrown, and the rest of the transaction
    /// goes on. Savepoints nest.
    ///
    /// ```swift
    /// try store.write { tx in
    ///     try tx[books].persist(first)
    ///     // A duplicate ISBN fails alone; `first` is still written.
    ///     do { try tx.savepoint { try tx[books].persist(duplicate) } } catch DatastoreError.uniqueIndexViolation { }
    /// }
    /// ```
    @discardableResult
    public func savepoint<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try write.nested { _ in try body() }
        } catch {
            // The rolled-back entries are gone: appenders learn their position from the log again.
            for appender in changeLogs { appender.forgetPosition() }
            throw error
        }
    }
}
