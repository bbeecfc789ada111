import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Synchronization
import Testing
@testable import StrataEntities

/// Entity writes that group commit puts into one commit each keep their change-log record.
@Suite struct EntityGroupCommitTests {
    /// Threads writing at once share commits; observers must still see every entity created.
    /// (The log held one entry per commit, written with a plain put: the second request of a
    /// group replaced the first one's record, and observers never heard of its entities.)
    @Test func groupedWritesEachLogTheirChanges() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.durability = .full  // a slow flush lets the waiting writes form groups
        let store = try EntityStore(at: dir.path, options: options)
        var created = Set<EntityID>()
        var generations = Set<UInt64>()
        var logged = Set<EntityID>()
        // Grouping depends on timing; a few rounds make a round without any group very unlikely.
        for round in 0..<8 where generations.count >= created.count {
            let ids = Mutex<[EntityID]>([])
            let finished = DispatchGroup()
            for index in 0..<32 {
                finished.enter()
                Thread {
                    let reference = EntityReference.new("item", with: ["n": .int(round * 100 + index)])
                    let id = try! store.writeNow { tx in try tx.resolve([reference])[reference]! }
                    ids.withLock { $0.append(id) }
                    finished.leave()
                }.start()
            }
            finished.wait()
            created.formUnion(ids.withLock { $0 })
            (generations, logged) = try store.database.read { tx in
                var generations = Set<UInt64>(), logged = Set<EntityID>()
                try tx.scan(tx.tree(EntityLayout.log)) { key, value in
                    generations.insert(try EntityChangeLog.generation(of: key))
                    logged.formUnion(try value.withUnsafeBytes { try EntityChangeLog.decode($0) }.keys)
                    return true
                }
                return (generations, logged)
            }
        }
        #expect(generations.count < created.count, "no writes were grouped, so the test proved nothing")
        #expect(logged == created)
    }
}
