import Foundation
import Synchronization
import Testing
import Strata
import StrataCore
import StrataTestFixtures

/// A one-shot gate a test opens to let a suspended transaction body go on.
private final class Gate: Sendable {
    private let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)
    private let arrived = Atomic<Bool>(false)
    private let opened = Atomic<Bool>(false)

    func wait() async {
        await withCheckedContinuation { continuation in
            let openAlready = waiting.withLock { waiting -> Bool in
                if opened.load(ordering: .acquiring) { return true }
                waiting = continuation
                return false
            }
            arrived.store(true, ordering: .releasing)
            if openAlready { continuation.resume() }
        }
    }

    var hasArrived: Bool { arrived.load(ordering: .acquiring) }

    func open() {
        let continuation = waiting.withLock { waiting in
            opened.store(true, ordering: .releasing)
            defer { waiting = nil }
            return waiting
        }
        continuation?.resume()
    }
}

private func waitUntil(_ condition: () -> Bool) async {
    for _ in 0..<4000 where !condition() { try? await Task.sleep(nanoseconds: 5_000_000) }
}

private struct Refused: Error {}

@Suite struct AsyncTransactionTests {
    @Test func bodyAwaitsAndCommits() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let sample = sampleBooks()
        let written = try await store.write { tx in
            try tx[books].persist(sample[0])
            try await Task.sleep(nanoseconds: 1_000_000)
            await Task.yield()
            try tx[books].persist(sample[1])
            return try tx[books].count
        }
        #expect(written == 2)
        #expect(try books.count == 2)
        let titles = try await books.read { reader in
            await Task.yield()
            return try reader.loadAll().map(\.title).sorted()
        }
        #expect(titles == ["Dune", "Emma"])
    }

    @Test func thrownErrorRollsBack() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let before = store.database.generation
        await #expect(throws: Refused.self) {
            try await books.write { writer in
                try writer.persist(sampleBooks()[0])
                await Task.yield()
                throw Refused()
            }
        }
        #expect(try books.count == 0)
        #expect(store.database.generation == before)
        // The writer lock was released: the next write goes through.
        try await books.write { writer in try writer.persist(sampleBooks()[1]) }
        #expect(try books.count == 1)
    }

    @Test func cancellationRollsBack() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let gate = Gate()
        let task = Task {
            try await books.write { writer in
                try writer.persist(sampleBooks()[0])
                await gate.wait()
                try writer.persist(sampleBooks()[1])
            }
        }
        await waitUntil { gate.hasArrived }
        task.cancel()
        gate.open()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try books.count == 0)
        try await books.persist(sampleBooks()[2])
        #expect(try books.count == 1)
    }

    @Test func cancelledWhileWaitingForTheWriterLock() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let gate = Gate()
        let holder = Task {
            try await books.write { writer in
                try writer.persist(sampleBooks()[0])
                await gate.wait()
            }
        }
        await waitUntil { gate.hasArrived }
        let waiter = Task { try await books.write { writer in try writer.persist(sampleBooks()[1]) } }
        try await Task.sleep(nanoseconds: 20_000_000)
        waiter.cancel()
        // The waiter gives up while the holder still holds the lock.
        await #expect(throws: CancellationError.self) { try await waiter.value }
        gate.open()
        try await holder.value
        #expect(try books.loadAll().map(\.title) == ["Dune"])
        try await books.persist(sampleBooks()[2])
        #expect(try books.count == 2)
    }

    @Test func nestedWriteIsRefused() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        try await store.write { tx in
            try tx[books].persist(sampleBooks()[0])
            #expect(throws: StrataError.self) { try books.persist(sampleBooks()[1]) }
            await #expect(throws: StrataError.self) { try await store.write { _ in await Task.yield() } }
            #expect(throws: StrataError.self) { _ = try store.datastore(TickFormat.self) }
        }
        #expect(try books.count == 1)
    }

    /// `database.close()` inside an async write body: the transaction belongs to another thread,
    /// so close() waited for the writer lock that the body's own transaction held (a hang, on the
    /// cooperative pool). It returns at once; the write commits, and the lock goes with its end.
    @Test func closingInsideAnAsyncWriteBodyDoesNotHang() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        try await store.write { tx in
            try tx[books].persist(sampleBooks()[0])
            await Task.yield()
            store.database.close()
        }
        let reopened = try Store(at: dir.path) // the writer lock was released
        defer { reopened.database.close() }
        #expect(try reopened.datastore(BookFormat.self).count == 1)
    }

    @Test func concurrentAsyncWritesSerialize() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        let id = UUID()
        try await books.persist(Book(id: id, title: "counter", authors: [], isbn: "c", shelf: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<10 {
                        try await books.write { writer in
                            var book = try #require(try writer.load(id))
                            await Task.yield()
                            book.shelf += 1
                            try writer.persist(book)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await books.load(id)?.shelf == 80)
    }

    /// Readers never wait on the writer: another process reads the last committed state while a
    /// write body is suspended holding the writer.
    @Test func readerProcessReadsWhileBodyIsSuspended() async throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)
        try await books.persist(sampleBooks()[0])
        let gate = Gate()
        let writing = Task {
            try await books.write { writer in
                try writer.persist(sampleBooks()[1])
                await gate.wait()
            }
        }
        await waitUntil { gate.hasArrived }
        let child = try ChildProcess(["typed-count", dir.path])
        let line = await Task.detached { child.waitFor("count") }.value
        #expect(line == "count 1")
        #expect(await Task.detached { child.waitForExit() }.value == 0)
        gate.open()
        try await writing.value
        #expect(try books.count == 2)
    }
}
