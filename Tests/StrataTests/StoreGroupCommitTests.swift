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
        // One change-log entry per acknowledged write, none for a failed one, however they were
        // grouped (a failed request's rolled-back entry must not shift or hide a later one's).
        let logged = try store.database.read { try $0.record(of: $0.tree(BookFormat.name + "#log")).entries }
        #expect(logged == UInt64(outcomes.values.filter { $0 }.count))
    }

    /// Writes that share one commit each append their own change-log entry: observers see every
    /// one of them. (A sequence number that restarted for each grouped request made the later
    /// request's entry overwrite the earlier one's, so observers missed changes.)
    @Test func groupedWritesEachLogTheirChange() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.durability = .full  // a slow flush lets the waiting writes form groups
        let store = try Store(at: dir.path, options: options)
        let books = try store.datastore(BookFormat.self)
        var written = 0
        var generations = Set<UInt64>()
        // Grouping depends on timing; a few rounds make a round without any group very unlikely.
        for round in 0..<8 where generations.count >= written {
            let batch = (0..<32).map { Book(title: "Book \(round)-\($0)", authors: [], isbn: "isbn-\(round)-\($0)", shelf: 0) }
            // One thread per write (not `concurrentPerform`, which runs as many at once as there are cores).
            let finished = DispatchGroup()
            for book in batch {
                finished.enter()
                Thread {
                    try! store.write { tx in _ = try tx[books].persist(book) }
                    finished.leave()
                }.start()
            }
            finished.wait()
            written += batch.count
            generations = try store.database.read { tx in
                var seen = Set<UInt64>()
                let cursor = try tx.cursor(tx.tree("books#log"))
                var more = try cursor.first()
                while more {
                    seen.insert(try cursor.key().withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) })
                    more = try cursor.next()
                }
                return seen
            }
        }
        #expect(generations.count < written, "no writes were grouped, so the test proved nothing")
        let logged = try store.database.read { tx in try tx.count(tx.tree("books#log")) }
        #expect(logged == written)
        #expect(try books.count == written)
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
