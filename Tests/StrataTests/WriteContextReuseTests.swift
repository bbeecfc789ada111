import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

/// The write state one context hands to the next (`WriteContextReuse`): tree handles, change-log
/// appenders and buffers of a finished context serve the next one. Each test checks what that
/// state must not carry over: a log position (every commit's entries are numbered from 0,
/// densely, also when requests share a commit), tree handles of a finished or rolled-back
/// transaction, and a context kept alive past its body.
@Suite struct WriteContextReuseTests {
    private struct IntendedFailure: Error {}

    /// The sequence numbers of each generation's entries in `log`.
    private static func sequencesByGeneration(_ log: String, in store: Store<ReadWrite>) throws -> [UInt64: [UInt32]] {
        try store.database.read { tx in
            var result: [UInt64: [UInt32]] = [:]
            try tx.scan(try tx.tree(log)) { key, _ in
                let bytes = key.bytes
                let generation = UInt64(bigEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })
                result[generation, default: []].append(UInt32(bigEndian: bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self) }))
                return true
            }
            return result
        }
    }

    /// Every generation's entries are numbered 0, 1, 2, … in key order.
    private static func expectDenseSequences(_ log: String, in store: Store<ReadWrite>) throws -> Int {
        var total = 0
        for (generation, sequences) in try sequencesByGeneration(log, in: store) {
            #expect(sequences == Array(0..<UInt32(sequences.count)), "generation \(generation) of \(log): \(sequences)")
            total += sequences.count
        }
        return total
    }

    /// Transactions of one or more writes into two datastores, in varying order, some failing and
    /// some with a rolled-back savepoint, one after the other: each commit's log entries start at
    /// 0, every kept write is logged once, and the indexes are exact.
    @Test func stateHandedOnKeepsLogsAndIndexesExact() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let ticks = try store.datastore(TickFormat.self)
        var keptBooks = 0, keptTicks = 0
        for round in 0..<40 {
            let book = Book(title: "T\(round)", authors: ["A\(round % 3)"], isbn: "isbn-\(round)", shelf: round % 4)
            let tick = Tick(id: round, value: round * 2)
            do {
                try store.write { tx in
                    if round % 3 == 0 { try tx[ticks].persist(tick) }
                    try tx[books].persist(book)
                    if round % 5 == 0 {
                        _ = try? tx.savepoint {
                            try tx[books].persist(Book(title: "gone", authors: [], isbn: "gone-\(round)", shelf: 0))
                            throw IntendedFailure()
                        }
                    }
                    if round % 3 == 1 { try tx[ticks].persist(tick) }
                    if round % 7 == 6 { throw IntendedFailure() }
                }
                keptBooks += 1
                if round % 3 != 2 { keptTicks += 1 }
            } catch is IntendedFailure {}
        }
        #expect(try books.count == keptBooks)
        #expect(try ticks.count == keptTicks)
        #expect(try Self.expectDenseSequences("books#log", in: store) == keptBooks)
        #expect(try Self.expectDenseSequences("ticks#log", in: store) == keptTicks)
        #expect(try books.loadAll("gone", from: \.title).isEmpty)
        #expect(try books.check().problems.isEmpty)
        #expect(try ticks.check().problems.isEmpty)
    }

    /// A context kept alive past its body keeps its state to itself: later writes run with other
    /// state, the kept context's writer refuses with a typed error, and once it is let go its
    /// state serves later writes correctly.
    @Test func contextKeptPastItsBodyKeepsItsState() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        var escaped: StoreWriteContext?
        try store.write { tx in
            try tx[books].persist(Book(title: "first", authors: [], isbn: "isbn-0", shelf: 0))
            escaped = tx
        }
        for n in 1...3 { try books.persist(Book(title: "T\(n)", authors: [], isbn: "isbn-\(n)", shelf: n)) }
        #expect(throws: StrataError.self) { try escaped?[books].persist(Book(title: "late", authors: [], isbn: "late", shelf: 0)) }
        escaped = nil
        for n in 4...6 { try books.persist(Book(title: "T\(n)", authors: [], isbn: "isbn-\(n)", shelf: n)) }
        #expect(try books.count == 7)
        #expect(try Self.expectDenseSequences("books#log", in: store) == 7)
        #expect(try books.load("late", from: \.isbn) == nil)
        #expect(try books.check().problems.isEmpty)
    }

    /// Concurrent async writes share commits (group commit), each request in a context of its
    /// own, contexts handing state on while the commit is still open: every write is logged once
    /// and each commit's entries stay dense.
    @Test func concurrentWritersSharingCommits() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<64 {
                group.addTask {
                    _ = try await books.persist(Book(title: "T\(n)", authors: ["A"], isbn: "isbn-\(n)", shelf: n % 5))
                }
            }
            try await group.waitForAll()
        }
        #expect(try books.count == 64)
        #expect(try Self.expectDenseSequences("books#log", in: store) == 64)
        #expect(try books.check().problems.isEmpty)
    }
}
