import Foundation
import Strata
@testable import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// An unreadable `entities.log` entry ends the change iterator: every later `next()` throws
/// the same `corrupt` error (found in review: the commits scanned before the bad entry stayed
/// buffered and were delivered, then delivered again by the next rescan from the same
/// generation, which threw again).
@Suite struct EntityChangesDamagedLogTests {
    @Test func aDamagedLogEntryEndsTheIteratorWithoutRepeatingCommits() async throws {
        let directory = TemporaryDirectory()
        let store = try EntityStore(at: directory.path)
        var commits = store.changes().makeAsyncIterator()
        let first = EntityReference.new("t")
        let firstID = try #require(try await store.resolve([first])[first])
        try await store.resolve([.new("t")])
        // The newest log entry (the second commit's) no longer decodes: change kind 9.
        try store.database.write { tx in
            let log = try tx.tree(EntityLayout.log)
            var newest: [UInt8]?
            try tx.scan(log) { key, _ in
                newest = key.bytes
                return true
            }
            try tx.put(try #require(newest), [0x01] + firstID.bytes + [0x09, 0x00, 0x00], in: log)
        }
        var deliveries = 0
        var errors = 0
        for attempt in 0..<4 {
            // A commit before each call, so a call that waits for one (the old behaviour) returns.
            try await store.resolve([.new("other", with: ["n": .int(attempt)])])
            do {
                if let commit = try await commits.next(), commit.changes[firstID] != nil { deliveries += 1 }
            } catch EntityError.corrupt {
                errors += 1
            }
        }
        #expect(deliveries <= 1)
        #expect(errors == 4 - deliveries)
        #expect(errors >= 3)
    }
}
