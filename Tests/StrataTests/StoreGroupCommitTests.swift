import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

@Suite struct StoreGroupCommitTests {
    private struct IntendedFailure: Error {}

    /// Concurrent async `Store.write`s (group commit underneath): every write that returned is
    /// stored with its index entries; a write whose body threw after persisting left nothing.
    @Test func concurrentAsyncWritesWithFailures() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        let written = (0..<48).map { Book(title: "Book \($0)", authors: ["A\($0 % 5)"], isbn: "isbn-\($0)", shelf: $0 % 4) }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for (index, book) in written.enumerated() {
                group.addTask {
                    do {
                        try await store.write { tx in
                            try tx[books].persist(book)
                            if index % 5 == 0 { throw IntendedFailure() }
                        }
                        return (index, true)
                    } catch is IntendedFailure {
                        return (index, false)
                    }
                }
            }
            var outcomes: [Int: Bool] = [:]
            for try await (index, succeeded) in group { outcomes[index] = succeeded }
            return outcomes
        }
        #expect(outcomes.count == written.count)
        try verify(books, written: written, outcomes: outcomes)
        #expect(try store.database.check().problems.isEmpty)
    }

    private func verify(_ books: Datastore<BookFormat, ReadWrite>, written: [Book], outcomes: [Int: Bool]) throws {
        for (index, book) in written.enumerated() {
            let succeeded = outcomes[index] ?? false
            #expect(succeeded == (index % 5 != 0))
            #expect(try books.load(book.id) == (succeeded ? book : nil))
            #expect(try books.load(book.isbn, from: \.isbn)?.id == (succeeded ? book.id : nil))
        }
    }
}
