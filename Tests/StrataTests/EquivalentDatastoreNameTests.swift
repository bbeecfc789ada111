import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

/// Two datastores whose names differ only in Unicode normalization — "\u{212B}" (ANGSTROM SIGN)
/// and "A\u{30A}" (A and a combining ring), both three UTF-8 bytes, equal by `==` — are two
/// datastores, as the catalog holds their trees apart: each one's change log, instances and
/// removal stay its own (`TreeName`).
@Suite struct EquivalentDatastoreNameTests {
    struct SignFormat: DatastoreFormat {
        static let name = "\u{212B}"
        typealias Instance = Tick
        typealias Identifier = Int
        let value = Index(\.value)
    }

    struct ComposedFormat: DatastoreFormat {
        static let name = "A\u{30A}"
        typealias Instance = Tick
        typealias Identifier = Int
        let value = Index(\.value)
    }

    /// Entries in the change log tree `log` (0 if there is none).
    private static func logEntries(_ log: String, in store: Store<ReadWrite>) throws -> Int {
        try store.database.read { tx in try tx.treeIfPresent(log).map { try tx.count($0) } ?? 0 }
    }

    @Test func eachDatastoreKeepsItsOwnLogAndInstances() throws {
        #expect(SignFormat.name == ComposedFormat.name && Array(SignFormat.name.utf8) != Array(ComposedFormat.name.utf8))
        let store = try Store.inMemory()
        let sign = try store.datastore(SignFormat.self)
        let composed = try store.datastore(ComposedFormat.self)
        // Both in one transaction (one write context, one list of log appenders), then each alone.
        try store.write { tx in
            try tx[sign].persist(Tick(id: 1, value: 10))
            try tx[composed].persist(Tick(id: 2, value: 20))
            try tx[composed].persist(Tick(id: 3, value: 30))
        }
        try store.write { tx in try tx[composed].persist(Tick(id: 4, value: 40)) }
        try store.write { tx in try tx[sign].persist(Tick(id: 5, value: 50)) }
        #expect(try Self.logEntries(SignFormat.name + "#log", in: store) == 2)
        #expect(try Self.logEntries(ComposedFormat.name + "#log", in: store) == 3)
        #expect(try sign.loadAll().map(\.id) == [1, 5])
        #expect(try composed.loadAll().map(\.id) == [2, 3, 4])
        #expect(try sign.check().problems.isEmpty && composed.check().problems.isEmpty)

        // Clearing and removing one leaves the other whole.
        #expect(try store.clear() == 5)
        #expect(try Self.logEntries(SignFormat.name + "#log", in: store) == 2 + 2)
        #expect(try Self.logEntries(ComposedFormat.name + "#log", in: store) == 3 + 3)
        try store.write { tx in try tx[composed].persist(Tick(id: 6, value: 60)) }
        #expect(try store.removeDatastore(named: SignFormat.name))
        #expect(try composed.loadAll().map(\.id) == [6])
        #expect(try composed.check().problems.isEmpty)
        #expect(try store.datastoreNames().map { Array($0.utf8) } == [Array(ComposedFormat.name.utf8)])
    }
}
