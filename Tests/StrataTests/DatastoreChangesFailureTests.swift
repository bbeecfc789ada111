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
        let outcome = try await DamagedChangeStream.outcome(label: "datastoreChangesFailure", armDamage: {
            ChangeMonitor.shared.runOnceDuringNextDelivery(to: database) {
                // Before the poller reads the new snapshot.
                CatalogDamage.breakNewestRootPage(dataPath: path, pageSize: pageSize, generation: database.generation)
            }
        }, commit: { attempt in try await books.persist(all[attempt]) }, next: { try await changes.next() != nil })
        guard case .threw(let error) = outcome, case StrataError.corruptPage = error else {
            Issue.record("expected corruptPage, got \(outcome)")
            return
        }
    }
}
