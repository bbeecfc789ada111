import Foundation
import Strata
import StrataCore
import Testing
@testable import StrataEntities

/// A context kept past its operation (the synchronous forms take non-escaping closures, but a
/// class reference can still be stored outside) must fail with a typed error on every use,
/// never read a later snapshot, write into a later transaction or crash.
@Suite struct EntityContextAfterOperationTests {
    @Test func aWriteContextUsedAfterItsOperationThrows() throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        var kept: EntityWriteContext?
        let ref = EntityReference.new("t", with: ["p": 0])
        let id = try store.writeNow { context in
            kept = context
            return try #require(try context.resolve([ref])[ref])
        }
        let context = try #require(kept)
        #expect(throws: StrataError.closed(what: "transaction")) { try context.set(["p": 1], of: [.id(id)]) }
        #expect(throws: StrataError.closed(what: "transaction")) { try context.records([.id(id)]) }
        #expect(try store.readNow { try $0.records([.id(id)])[.id(id)]?["p"] } == .int(0))
    }

    @Test func aReadContextUsedAfterItsOperationThrows() throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let ref = EntityReference.new("t", with: ["p": 0])
        let id = try #require(try store.writeNow { try $0.resolve([ref])[ref] })
        var kept: EntityReadContext?
        _ = try store.readNow { context in kept = context; return 0 }
        let context = try #require(kept)
        #expect(throws: StrataError.closed(what: "transaction")) { try context.records([.id(id)]) }
    }
}
