// groupcommit on Strata: every thread calls `Database.write` on the one shared handle, which
// groups concurrent requests into shared commits. Commits = generations published.
import Glibc
import StrataBenchKit
import StrataCore

extension StrataStore: ConcurrentKVStore {
    func threadClient() -> any ThreadClient { StrataThreadClient(database: sharedDatabase) }

    func commitCount() -> UInt64? { sharedDatabase.generation }
}

final class StrataThreadClient: ThreadClient {
    let database: Database
    /// `STRATA_BENCH_UNGROUPED=1`: each thread runs its own transaction (`beginWrite`, put,
    /// `commit`), waiting for the writer lock as every write did before group commit: the
    /// baseline the grouped figures are compared with.
    static let ungrouped = getenv("STRATA_BENCH_UNGROUPED").map { String(cString: $0) == "1" } ?? false

    init(database: Database) { self.database = database }

    func commitOne(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) {
        do {
            if StrataThreadClient.ungrouped {
                let tx = try database.beginWrite()
                _ = try tx.put(key, value, in: try tx.tree(StrataStore.treeName))
                try tx.commit()
                return
            }
            try database.write { tx in _ = try tx.put(key, value, in: try tx.tree(StrataStore.treeName)) }
        } catch {
            BenchMain.fatal("strata groupcommit write: \(error)")
        }
    }

    func readOne(_ key: UnsafeRawBufferPointer) -> Bool {
        do {
            return try database.read { tx in try tx.get(key, in: try tx.tree(StrataStore.treeName)) != nil }
        } catch {
            BenchMain.fatal("strata groupcommit read: \(error)")
        }
    }

    func close() {}
}
