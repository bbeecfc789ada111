import Strata
import StrataCore

/// The commits of the entity store, from any process, as they happen: one `EntityCommit` per
/// committed write (which entities were created, updated or deleted, and which keys).
///
/// How it works: every entity write transaction appends its changes to the `entities.log` tree.
/// The process's change poller (`Database.changes(trees:)`, futex-free) reports commits that
/// touched that tree; the iterator then reads the log entries after the generation it has
/// reported. It holds a read snapshot at that generation, which keeps the writer from trimming
/// entries it still needs (see `EntityChangeLog`).
public struct EntityChanges: AsyncSequence {
    /// One committed entity write.
    public typealias Element = EntityCommit
    let database: Database
    let schedule: PollingSchedule

    /// Starts following commits from the current generation.
    public func makeAsyncIterator() -> Iterator { Iterator(database: database, schedule: schedule) }

    /// Follows commits after the generation it last reported, holding a read snapshot there.
    public struct Iterator: AsyncIteratorProtocol {
        let database: Database
        private var stream: ChangeStream?
        private var streamIterator: ChangeStream.AsyncIterator?
        private var snapshot: ReadTransaction?
        private var buffered: [EntityCommit] = []
        private var failure: Error?

        init(database: Database, schedule: PollingSchedule) {
            self.database = database
            do {
                let stream = try database.changes(trees: [EntityLayout.log], schedule: schedule)
                self.stream = stream
                streamIterator = stream.makeAsyncIterator()
                snapshot = try database.beginRead()
            } catch {
                failure = error
            }
        }

        /// The next commit that touched the entity store, waiting for one; nil once the change
        /// stream ends (the handle was closed or the task cancelled). Rethrows an error from
        /// starting to follow the store (e.g. `StrataError.closed`) and the one that ended the
        /// stream (`ChangeStream.failure`: the store's newest commits could not be read), and
        /// throws `EntityError.corrupt` for an unreadable log entry. After an error, every call
        /// throws it again: the iterator is done.
        public mutating func next() async throws -> EntityCommit? {
            if let failure { throw failure }
            while buffered.isEmpty {
                guard await streamIterator?.next() != nil else {
                    snapshot?.end()
                    if let ended = stream?.failure { throw ended }
                    return nil
                }
                try collect()
            }
            return buffered.removeFirst()
        }

        /// Buffers the commits after the snapshot's generation and moves the snapshot to the
        /// newest. All or nothing: if a log entry does not decode, nothing of the scan is
        /// buffered and the error is kept in `failure`, so every later `next()` throws it
        /// (a rescan from the same generation would deliver the commits before it again).
        private mutating func collect() throws {
            guard let old = snapshot else { return }
            let new = try database.beginRead()
            guard new.generation > old.generation else { return new.end() }
            var commits: [EntityCommit] = []
            do {
                if let log = try new.treeIfPresent(EntityLayout.log) {
                    try new.scan(log, from: EntityChangeLog.key(old.generation + 1)) { key, value in
                        let generation = try EntityChangeLog.generation(of: key)
                        commits.append(EntityCommit(generation: generation, changes: try value.withUnsafeBytes { try EntityChangeLog.decode($0) }))
                        return true
                    }
                }
            } catch {
                new.end()
                old.end()
                snapshot = nil
                failure = error
                throw error
            }
            buffered.append(contentsOf: commits)
            old.end()
            snapshot = new
        }
    }
}

extension EntityStore {
    /// Every commit of entity changes from now on, by any process (see `EntityChanges`).
    ///
    /// ```swift
    /// for try await commit in reader.changes() {
    ///     for (id, change) in commit.changes { print(id, change.kind, change.keys) }
    /// }
    /// ```
    public func changes(schedule: PollingSchedule = .standard) -> EntityChanges {
        EntityChanges(database: database, schedule: schedule)
    }
}
