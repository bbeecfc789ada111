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
        ChangeMonitor.shared.runOnceDuringNextDelivery(to: database) {
            // Before the poller reads the new snapshot: break its catalog root's page kind (the
            // catalog record is at byte 56 of the newest meta).
            let generation = database.generation
            var root = [UInt8](repeating: 0, count: 8)
            let descriptor = open(path, O_RDWR)
            defer { close(descriptor) }
            _ = pread(descriptor, &root, 8, off_t(Int(generation % 2) * pageSize + MetaPage.Offset.catalog))
            let page = root.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            var kind: UInt8 = 0xEE
            _ = pwrite(descriptor, &kind, 1, off_t(page * UInt64(pageSize) + UInt64(PageLayout.kindOffset)))
        }
        try await books.persist(all[1])
        await #expect(performing: { _ = try await changes.next() }, throws: { error in
            if case StrataError.corruptPage = error { return true }
            return false
        })
    }
}
