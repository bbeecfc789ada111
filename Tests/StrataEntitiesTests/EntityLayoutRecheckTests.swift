import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The layout of the entity trees is checked again whenever a handle reads a generation it has
/// not checked: a writer of a later build may upgrade the store while a reader of this build
/// stays open, and that reader must refuse the new layout with a typed error, not read it as its
/// own (a header or history range it no longer understands would give wrong answers silently).
@Suite struct EntityLayoutRecheckTests {
    /// Writes `layout` as the stored layout version, as a later build's upgrade would.
    private func storeLayout(_ layout: UInt64, in database: Database) throws {
        try database.write { tx in
            try tx.put(EntityLayout.versionName, withUnsafeBytes(of: layout.bigEndian) { Array($0) }, in: try tx.tree(EntityLayout.meta))
        }
    }

    @Test func aReaderOpenAcrossAnUpgradeToAnUnknownLayoutRefusesIt() async throws {
        let directory = TemporaryDirectory()
        let writer = try EntityStore(at: directory.path)
        let ada = EntityReference.new("person", with: ["name": "Ada"])
        try await writer.resolve([ada])
        let reader = try EntityStore(at: directory.path, mode: .readOnly)
        #expect(try await reader.entities(ofType: "person").count == 1)
        #expect(try await reader.records([ada])[ada]?["name"] == .string("Ada"))

        let future = EntityLayout.version + 1
        try storeLayout(future, in: writer.database)
        await #expect(throws: EntityError.unsupportedLayout(found: future, supported: EntityLayout.version)) {
            _ = try await reader.entities(ofType: "person")
        }
        await #expect(throws: EntityError.unsupportedLayout(found: future, supported: EntityLayout.version)) {
            _ = try await reader.records([ada])
        }
        // The writer's own handle, which checked the layout before, refuses to write into it too.
        #expect(throws: EntityError.unsupportedLayout(found: future, supported: EntityLayout.version)) {
            try writer.writeNow { tx in _ = try tx.resolve([.new("person")]) }
        }
        #expect(throws: EntityError.unsupportedLayout(found: future, supported: EntityLayout.version)) {
            _ = try writer.readNow { try $0.entities(ofType: "person") }
        }

        // Back to this build's layout (as if the upgrade were undone): the same handles read again.
        try storeLayout(EntityLayout.version, in: writer.database)
        #expect(try await reader.entities(ofType: "person").count == 1)
    }

    /// Reads of a generation already checked skip the check; a store without entities passes
    /// and is checked again once entities appear.
    @Test func aStoreWithoutEntitiesIsCheckedAgainOnceItHasSome() async throws {
        let directory = TemporaryDirectory()
        let writer = try EntityStore(at: directory.path)
        let reader = try EntityStore(at: directory.path, mode: .readOnly)
        #expect(try await reader.entities(ofType: "person").isEmpty)
        try await writer.resolve([.new("person")])
        let future = EntityLayout.version + 1
        try storeLayout(future, in: writer.database)
        await #expect(throws: EntityError.unsupportedLayout(found: future, supported: EntityLayout.version)) {
            _ = try await reader.entities(ofType: "person")
        }
    }
}
