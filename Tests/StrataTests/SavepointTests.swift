import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

@Suite struct SavepointTests {
    /// A unique-index violation inside a savepoint rolls back the savepoint (also what it wrote
    /// before the violation) and leaves the rest of the transaction to commit.
    @Test func failedUniqueInsertRollsBackOnlyTheSavepoint() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let first = Book(title: "Dune", authors: ["Frank Herbert"], isbn: "isbn-1", shelf: 1)
        let inSavepoint = Book(title: "Emma", authors: ["Jane Austen"], isbn: "isbn-2", shelf: 2)
        let clash = Book(title: "Clash", authors: [], isbn: "isbn-1", shelf: 9)
        let after = Book(title: "Beloved", authors: ["Toni Morrison"], isbn: "isbn-5", shelf: 2)
        var caught = false
        try store.write { tx in
            try tx[books].persist(first)
            do {
                try tx.savepoint {
                    try tx[books].persist(inSavepoint)
                    try tx[books].persist(clash)
                }
            } catch DatastoreError.uniqueIndexViolation {
                caught = true
            }
            // Inside the transaction: the savepoint's writes are gone, the earlier one is there.
            #expect(try tx[books].load(inSavepoint.id) == nil)
            #expect(try tx[books].load(first.id) == first)
            try tx[books].persist(after)
            // A nested savepoint that succeeds inside one that fails is rolled back with it.
            _ = try? tx.savepoint {
                try tx.savepoint { try tx[books].persist(inSavepoint) }
                throw CancellationError()
            }
        }
        #expect(caught)
        #expect(try books.load(first.id) == first)
        #expect(try books.load(after.id) == after)
        #expect(try books.load(inSavepoint.id) == nil)
        #expect(try books.load(clash.id) == nil)
        #expect(try books.load("isbn-1", from: \.isbn)?.id == first.id)
        #expect(try books.load("isbn-2", from: \.isbn) == nil)
        #expect(try books.loadAll().map(\.id).sorted { $0.uuidString < $1.uuidString } == [first.id, after.id].sorted { $0.uuidString < $1.uuidString })
        #expect(try store.database.check().problems.isEmpty)
    }

    /// The first write of a datastore happens inside a savepoint that rolls back (so the trees it
    /// created are gone); writes after it in the same transaction open them again and log each
    /// change once, with the same writer reused throughout.
    @Test func writesAfterARolledBackSavepointThatCreatedTheTrees() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let rolledBack = Book(title: "Emma", authors: [], isbn: "isbn-2", shelf: 2)
        let kept = [Book(title: "Dune", authors: [], isbn: "isbn-1", shelf: 1), Book(title: "Beloved", authors: [], isbn: "isbn-5", shelf: 2)]
        try store.write { tx in
            let writer = tx[books]
            _ = try? tx.savepoint {
                try writer.persist(rolledBack)
                throw CancellationError()
            }
            for book in kept { try writer.persist(book) }
        }
        #expect(try books.load(rolledBack.id) == nil)
        #expect(try books.loadAll().count == kept.count)
        #expect(try books.load("isbn-5", from: \.isbn)?.id == kept[1].id)
        let logged = try store.database.read { tx in try tx.count(tx.tree("books#log")) }
        #expect(logged == kept.count)
        #expect(try store.database.check().problems.isEmpty)
    }
}
