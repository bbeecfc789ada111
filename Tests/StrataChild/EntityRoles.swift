// Child roles for the entity store's multi-process tests (Tests/StrataEntitiesTests).
import Foundation
import Strata
import StrataCore
import StrataEntities

/// Runs `role` if it is one of the entity roles; returns false if it is not.
func runEntityRole(_ role: String, _ arguments: [String]) async throws -> Bool {
    switch role {
    case "entity-writer": try await entityWriter(path: arguments[1], count: Int(arguments[2]) ?? 1)
    default: return false
    }
    return true
}

/// Opens the store read-write, says "ready", waits for a line, then commits `count` operations:
/// operation i sets the meter's "count" to i (creating the meter on the first: get-or-create by
/// name) and creates item i pointing at it; the last one also deletes item 1. Says
/// "committed i GENERATION" after each and "done" at the end.
func entityWriter(path: String, count: Int) async throws {
    var options = DatabaseOptions()
    options.durability = .none
    let store = try EntityStore(at: path, options: options)
    say("ready")
    _ = readLine()
    let meter = EntityReference.named("meter", ofType: "meter").createIfMissing()
    for i in 1...count {
        try await store.write { tx in
            try tx.set(["count": .int(i)], of: [meter])
            try tx.relate([.whereKey("i", equals: .int(i), ofType: "item").createIfMissing()], key: "meter", to: meter)
            if i == count { try tx.delete([.whereKey("i", equals: 1, ofType: "item")]) }
        }
        say("committed \(i) \(store.database.generation)")
        usleep(1000)
    }
    say("done")
}
