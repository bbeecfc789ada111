import Foundation
import Strata
@testable import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// When the poller ends a store's change streams because it cannot read the newest commit (a
/// damaged catalog), an entity change iterator throws that error instead of ending as if the
/// handle had been closed (found in review: it returned nil, the damage went unreported).
@Suite struct EntityChangesFailureTests {
    @Test func aDamagedCatalogIsThrownByTheEntityChangeIterator() async throws {
        let directory = TemporaryDirectory()
        let store = try EntityStore(at: directory.path)
        try await store.resolve([.new("person", with: ["name": "Ada"])])
        let database = store.database
        var commits = store.changes().makeAsyncIterator()
        let pageSize = database.pageSize
        let path = directory.path + "/data"
        // The damage is timed by the shared poller's next delivery; with many stores polled at
        // once that delivery can be for the commit before (its snapshot then reads well and the
        // change arrives). Such an attempt is retried with the next commit; an iterator that ends
        // without an error fails the test at once.
        var thrown: (any Error)?
        for attempt in 1...3 where thrown == nil {
            ChangeMonitor.shared.runOnceDuringNextDelivery(to: database) {
                // Before the poller reads the new snapshot.
                CatalogDamage.breakNewestRootPage(dataPath: path, pageSize: pageSize, generation: database.generation)
            }
            try await store.resolve([.new("person", with: ["name": .string("Bob \(attempt)")])])
            do {
                guard try await commits.next() != nil else {
                    Issue.record("the change iterator ended without an error (attempt \(attempt))")
                    return
                }
                print("[entityChangesFailure] attempt \(attempt): the change arrived before the damage; retrying")
            } catch {
                thrown = error
            }
        }
        if let thrown, case StrataError.corruptPage = thrown {} else { Issue.record("expected corruptPage, got \(String(describing: thrown))") }
    }
}
