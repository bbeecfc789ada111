// Child roles that use the typed layer (Strata) through the shared test formats.
import Foundation
import Strata
import StrataCore
import StrataTestFixtures

/// Runs a typed-layer role; returns false if `role` is not one of them.
func runTypedRole(_ role: String, _ arguments: [String]) async throws -> Bool {
    let path = arguments[1]
    switch role {
    case "typed-observe":
        // Loads and observes BookFormat in a read-only store until `count` events arrived.
        let count = Int(arguments[2]) ?? 1
        let store = try Store(at: path, mode: .readOnly)
        let books = try store.datastore(BookFormat.self)
        var events = books.changes().makeAsyncIterator()
        say("ready \(try books.count)")
        var seen = 0
        while seen < count, let event = try await events.next() {
            seen += 1
            switch event {
            case .created(_, let book): say("created \(book.title)")
            case .updated(_, let old, let new): say("updated \(old.title) -> \(new.title)")
            case .deleted(_, let old): say("deleted \(old.title)")
            }
        }
        let titles = try books.load(..., from: \.title).map(\.title)
        say("titles \(titles.joined(separator: ","))")
        return true
    case "typed-count":
        // Opens the store read-only, prints how many books it holds and exits.
        let store = try Store(at: path, mode: .readOnly)
        say("count \(try store.datastore(BookFormat.self).count)")
        return true
    default:
        return false
    }
}
