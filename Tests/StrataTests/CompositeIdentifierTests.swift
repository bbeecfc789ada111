import Foundation
import Testing
import Strata
import StrataTestFixtures

/// Empire's shape: a book is identified by (shelf, title).
struct ShelvedBook: Codable, Sendable, Equatable {
    var shelf: Int
    var title: String
    var author: String
    var year: Int
}

struct ShelvedBookFormat: DatastoreFormat {
    static let name = "shelved"
    typealias Instance = ShelvedBook
    typealias Identifier = CompositeKey<Int, String>
    static func identifier(of book: ShelvedBook) -> Identifier { CompositeKey(book.shelf, book.title) }

    let authorYear = Index(\.author, \.year)
}

@Suite struct CompositeIdentifierTests {
    private func library() throws -> (Store<ReadWrite>, Datastore<ShelvedBookFormat, ReadWrite>) {
        let store = try Store.inMemory()
        let books = try store.datastore(ShelvedBookFormat.self)
        let all = [
            ShelvedBook(shelf: 3, title: "Anathem", author: "Stephenson", year: 2008),
            ShelvedBook(shelf: 3, title: "Dune", author: "Herbert", year: 1965),
            ShelvedBook(shelf: 3, title: "Accelerando", author: "Stross", year: 2005),
            ShelvedBook(shelf: 3, title: "B", author: "Herbert", year: 1970),
            ShelvedBook(shelf: 2, title: "Alpha", author: "Herbert", year: 1980),
            ShelvedBook(shelf: 4, title: "Aardvark", author: "Zed", year: 1999),
            ShelvedBook(shelf: 30, title: "Atlas", author: "Stephenson", year: 2020),
        ]
        for book in all { try books.persist(book) }
        return (store, books)
    }

    @Test func loadByLeadingParts() throws {
        let (_, books) = try library()
        #expect(try books.load(CompositeKey(3, "Dune"))?.author == "Herbert")
        #expect(try books.load(KeyPrefix(3)).map(\.title) == ["Accelerando", "Anathem", "B", "Dune"])
        #expect(try books.load(KeyPrefix(3), order: .descending, limit: 2).map(\.title) == ["Dune", "B"])
        #expect(try books.load(KeyPrefix(3), then: "A"..<"B").map(\.title) == ["Accelerando", "Anathem"])
        #expect(try books.load(KeyPrefix(3), then: "A"..."B", order: .descending).map(\.title) == ["B", "Anathem", "Accelerando"])
        #expect(try books.load(KeyPrefix(3), then: "B"...).map(\.title) == ["B", "Dune"])
        #expect(try books.load(KeyPrefix(3), then: IndexRange(lower: .excluding("B"))).map(\.title) == ["Dune"])
        #expect(try books.load(KeyPrefix(3, "Dune")).map(\.year) == [1965])
        #expect(try books.load(KeyPrefix(), then: 3...4).count == 5)
        #expect(try books.load(KeyPrefix(5)).isEmpty)
        #expect(try books.identifiers(KeyPrefix(2)) == [CompositeKey(2, "Alpha")])
        // The whole key order is (shelf, title): shelf 30 after shelf 4.
        #expect(try books.loadAll().map(\.shelf) == [2, 3, 3, 3, 3, 4, 30])
    }

    @Test func compositeIndexEqualityOnLeadingParts() throws {
        let (store, books) = try library()
        #expect(try books.load(KeyPrefix("Herbert"), from: \.authorYear).map(\.year) == [1965, 1970, 1980])
        #expect(try books.load(KeyPrefix("Herbert"), then: 1966..., from: \.authorYear, order: .descending).map(\.year) == [1980, 1970])
        #expect(try books.load(KeyPrefix("Herbert", 1970), from: \.authorYear).map(\.title) == ["B"])
        #expect(try store.read { try $0[books].load(KeyPrefix("Stephenson"), from: \.authorYear, limit: 1) }.map(\.title) == ["Anathem"])
        #expect(try books.load(KeyPrefix("Nobody"), from: \.authorYear).isEmpty)
    }

    @Test func streamsByLeadingParts() async throws {
        let (_, books) = try library()
        var titles: [String] = []
        for try await book in books.stream(KeyPrefix(3), then: "A"..<"C", order: .descending, batchSize: 1) { titles.append(book.title) }
        #expect(titles == ["B", "Anathem", "Accelerando"])
        titles = []
        for try await book in books.stream(KeyPrefix(3), limit: 3, batchSize: 2) { titles.append(book.title) }
        #expect(titles == ["Accelerando", "Anathem", "B"])
        await #expect(throws: KeyPrefixError.self) {
            for try await _ in books.stream(KeyPrefix("Dune")) {}
        }
    }

    @Test func outOfOrderOrExtraPartsAreTypedErrors() throws {
        let (_, books) = try library()
        // Title before shelf: the first part must be the shelf (Int).
        #expect(throws: KeyPrefixError.partTypeMismatch(key: "(Int, String)", position: 0, expected: "Int", found: "String")) {
            try books.load(KeyPrefix("Dune", 3))
        }
        // A range on the title without the shelf.
        #expect(throws: KeyPrefixError.partTypeMismatch(key: "(Int, String)", position: 0, expected: "Int", found: "String")) {
            try books.load(KeyPrefix(), then: "A"..<"B")
        }
        // An Int32 literal where the component is Int.
        #expect(throws: KeyPrefixError.self) { try books.load(KeyPrefix(Int32(3))) }
        #expect(throws: KeyPrefixError.tooManyParts(key: "(Int, String)", given: 3, components: 2)) {
            try books.load(KeyPrefix(3, "Dune", 1))
        }
        #expect(throws: KeyPrefixError.tooManyParts(key: "(Int, String)", given: 3, components: 2)) {
            try books.load(KeyPrefix(3, "Dune"), then: "A"...)
        }
        #expect(throws: KeyPrefixError.self) { try books.load(KeyPrefix(1965), from: \.authorYear) }
    }

    @Test func compositeKeysRoundTripThroughCodable() throws {
        let key = CompositeKey(3, "Dune")
        let data = try JSONEncoder().encode(key)
        #expect(String(decoding: data, as: UTF8.self) == #"[3,"Dune"]"#)
        #expect(try JSONDecoder().decode(CompositeKey<Int, String>.self, from: data) == key)
    }
}
