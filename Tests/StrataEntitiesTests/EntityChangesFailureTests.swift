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
        let outcome = try await DamagedChangeStream.outcome(label: "entityChangesFailure", armDamage: {
            ChangeMonitor.shared.runOnceDuringNextDelivery(to: database) {
                // Before the poller reads the new snapshot.
                CatalogDamage.breakNewestRootPage(dataPath: path, pageSize: pageSize, generation: database.generation)
            }
        }, commit: { attempt in try await store.resolve([.new("person", with: ["name": .string("Bob \(attempt)")])]) }, next: { try await commits.next() != nil })
        guard case .threw(let error) = outcome, case StrataError.corruptPage = error else {
            Issue.record("expected corruptPage, got \(outcome)")
            return
        }
    }
}
