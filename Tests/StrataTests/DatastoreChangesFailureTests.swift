import Foundation
import Strata
@testable import StrataCore
import StrataTestFixtures
import Testing

/// When the poller ends a store's change streams because it cannot read the newest commit (a
/// damaged catalog), a datastore's change iterator throws that error instead of ending as if
/// the handle had been closed (found in review, as for the entity store's).
@Suite struct DatastoreChangesFailureTests {
    @Test func aDamagedCatalogIsThrownByTheDatastoreChangeIterator() async throws {
        let directory = TemporaryDirectory()
        let store = try Store(at: directory.path)
        defer { store.database.close() }
        let books = try store.datastore(BookFormat.self)
        let all = sampleBooks()
        try await books.persist(all[0])
        var changes = books.changes().makeAsyncIterator()
        let database = store.database
        let pageSize = database.pageSize
        let path = directory.path + "/data"
        // The damage is timed by the poller's next delivery; on a loaded machine that delivery can
        // be for the commit before (its snapshot then reads well and the change arrives). Such an
        // attempt is retried with the next commit; the iterator must throw within a few.
        var thrown: (any Error)?
        for attempt in 1...3 where thrown == nil {
            ChangeMonitor.shared.runOnceDuringNextDelivery(to: database) {
                // Before the poller reads the new snapshot.
                CatalogDamage.breakNewestRootPage(dataPath: path, pageSize: pageSize, generation: database.generation)
            }
            try await books.persist(all[attempt])
            do {
                guard try await changes.next() != nil else {
                    Issue.record("the change iterator ended without an error (attempt \(attempt))")
                    return
                }
                print("[datastoreChangesFailure] attempt \(attempt): the change arrived before the damage; retrying")
            } catch {
                thrown = error
            }
        }
        if let thrown, case StrataError.corruptPage = thrown {} else { Issue.record("expected corruptPage, got \(String(describing: thrown))") }
    }
}
