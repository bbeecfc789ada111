import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

private struct Shelf: Codable, Sendable, Identifiable, Equatable {
    var id: UUID
    var title: String
    var pages: Int
}

private struct ShelfFormat: DatastoreFormat {
    static let name = "shelves"
    typealias Instance = Shelf
    typealias Identifier = UUID
    let title = Index(\.title)
}

/// Ranges over a string index (issue #16's title ranges): the identifier is read out of each
/// index key by the string's terminator, and the instances are found by grouped primary lookups
/// (`Transaction.forEachValue`).
/// Checked against a sorted model across many leaves, for empty ranges, limits and both orders,
/// with titles that contain zero bytes and share prefixes.
@Suite struct IndexRangeReadTests {
    @Test func rangesMatchASortedModel() throws {
        var generator = SeededGenerator(seed: testSeed("index range reads"))
        let store = try Store.inMemory()
        let shelves = try store.datastore(ShelfFormat.self)
        var model: [Shelf] = []
        try store.write { tx in
            for number in 0..<3_000 {
                // Titles repeat (several instances per value) and some hold zero bytes.
                let title = "T" + String(number % 700) + (number % 5 == 0 ? "\u{0}x" : "") + (number % 7 == 0 ? "é" : "")
                let shelf = Shelf(id: UUID(), title: title, pages: number)
                try tx[shelves].persist(shelf)
                model.append(shelf)
            }
        }
        // The index's order: the title's key bytes, then the identifier's.
        func sortKey(_ shelf: Shelf) -> [UInt8] { shelf.title.orderedKeyBytes + shelf.id.orderedKeyBytes }
        model.sort { sortKey($0).lexicographicallyPrecedes(sortKey($1)) }
        let titles = Array(Set(model.map(\.title)))
        for _ in 0..<150 {
            var bounds = [titles.randomElement(using: &generator)!, titles.randomElement(using: &generator)!]
            bounds.sort { $0.orderedKeyBytes.lexicographicallyPrecedes($1.orderedKeyBytes) }
            let (lower, upper) = (bounds[0], bounds[1])
            let inRange = model.filter {
                !$0.title.orderedKeyBytes.lexicographicallyPrecedes(lower.orderedKeyBytes) && $0.title.orderedKeyBytes.lexicographicallyPrecedes(upper.orderedKeyBytes)
            }
            #expect(try shelves.load(lower..<upper, from: \.title) == inRange)
            #expect(try shelves.load(lower..<upper, from: \.title, order: .descending) == inRange.reversed())
            let limit = Int.random(in: 1...30, using: &generator)
            #expect(try shelves.load(lower..<upper, from: \.title, limit: limit) == Array(inRange.prefix(limit)))
            #expect(try shelves.load(lower..<lower, from: \.title).isEmpty)
            #expect(try shelves.count(lower..<upper, from: \.title) == inRange.count)
        }
        #expect(try shelves.load(..., from: \.title) == model)
    }
}
