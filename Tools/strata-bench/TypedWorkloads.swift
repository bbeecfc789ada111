// The typed workload (StrataBenchKit's `TypedWorkload`) on Strata's typed layer: the Book is
// plain Codable, stored with the binary coder, with a reference index on title and a unique
// index on isbn, read through the public Datastore API.
import Foundation
import Strata
import StrataBenchKit
import StrataCore

struct BenchBookFormat: DatastoreFormat {
    static let name = "books"
    typealias Instance = BenchBook
    typealias Identifier = UUID
    let title = Index(\.title)
    let isbn = OneToOneIndex(\.isbn)
}

final class StrataBookStore: BookStore {
    let store: Store<ReadWrite>
    let books: Datastore<BenchBookFormat, ReadWrite>

    init(path: String, durability: BookDurability, verifyChecksums: Bool = false) throws {
        var options = DatabaseOptions()
        options.durability = durability == .full ? .full : .none
        options.verifyChecksums = verifyChecksums
        store = try Store(at: path + ".strata", options: options)
        books = try store.datastore(BenchBookFormat.self)
    }

    func persist(_ batch: ArraySlice<BenchBook>) throws {
        try store.write { tx in
            for book in batch { try tx[books].persist(book) }
        }
    }

    func update(_ book: BenchBook) throws { try books.persist(book) }

    func load(id: UUID) throws -> BenchBook? { try books.load(id) }

    /// The raw engine's get on the same key, one snapshot each, through the engine's cheapest
    /// per-call read (`withSnapshot`) with the key's 16 bytes lent from the stack — as the LMDB
    /// peer uses `mdb_txn_renew`/`mdb_txn_reset`, an open database handle and a stack key.
    func contains(id: UUID) throws -> Bool {
        try store.database.withSnapshot { snapshot in
            try withUnsafeBytes(of: id.uuid) { key in try snapshot.get(key, inTree: "books") != nil }
        }
    }

    func load(titlesFrom lower: String, below upper: String) throws -> [BenchBook] {
        try books.load(lower..<upper, from: \.title)
    }

    func load(isbn: String) throws -> BenchBook? { try books.load(isbn, from: \.isbn) }

    func close() { store.database.close() }
}
