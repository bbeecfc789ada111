import Foundation
import Testing
@testable import Strata
import StrataCore
import StrataTestFixtures

/// Collects a stream into an array.
private func collect<F>(_ stream: DatastoreStream<F>) async throws -> [F.Instance] {
    var all: [F.Instance] = []
    for try await instance in stream { all.append(instance) }
    return all
}

@Suite struct PullStreamTests {
    private func ticks(_ count: Int) throws -> (Store<ReadWrite>, Datastore<TickFormat, ReadWrite>) {
        let store = try Store.inMemory()
        let ticks = try store.datastore(TickFormat.self)
        try store.write { tx in for id in 0..<count { try tx[ticks].persist(Tick(id: id, value: id &* 7)) } }
        return (store, ticks)
    }

    /// Every batch size (1, a divisor, a non-divisor, larger than the range) and both orders
    /// give exactly the instances and the order of the equivalent load, with and without limits.
    @Test func batchesResumeExactlyAfterTheLastKey() async throws {
        let (_, ticks) = try ticks(100)
        for batchSize in [1, 10, 7, 64, 1000] {
            for order in [RangeOrder.ascending, .descending] {
                for consistency in [StreamConsistency.perBatch, .snapshot] {
                    #expect(try await collect(ticks.streamAll(order: order, batchSize: batchSize, consistency: consistency)).map(\.id)
                            == ticks.loadAll(order: order).map(\.id))
                    #expect(try await collect(ticks.stream(10..<60, order: order, limit: 23, batchSize: batchSize, consistency: consistency))
                            .map(\.id) == ticks.load(10..<60, order: order, limit: 23).map(\.id))
                    #expect(try await collect(ticks.stream(...42, order: order, batchSize: batchSize)).map(\.id)
                            == ticks.load(...42, order: order).map(\.id))
                }
            }
        }
        #expect(try await collect(ticks.stream(50..<50)).isEmpty)
        #expect(try await collect(ticks.streamAll(limit: 0)).isEmpty)
    }

    @Test func indexStreamsPullInBatches() async throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        for book in sampleBooks() { try await books.persist(book) }
        for batchSize in [1, 2, 5, 64] {
            for order in [RangeOrder.ascending, .descending] {
                // A reference index, a many-valued one and a direct one.
                #expect(try await collect(books.stream("A"..<"H", from: \.title, order: order, batchSize: batchSize)).map(\.id)
                        == books.load("A"..<"H", from: \.title, order: order).map(\.id))
                #expect(try await collect(books.stream(..., from: \.authors, order: order, limit: 5, batchSize: batchSize)).map(\.id)
                        == books.load(..., from: \.authors, order: order, limit: 5).map(\.id))
                #expect(try await collect(books.stream("isbn-2"..., from: \.isbn, order: order, batchSize: batchSize)).map(\.id)
                        == books.load("isbn-2"..., from: \.isbn, order: order).map(\.id))
            }
        }
    }

    /// `.perBatch` reads the newest generation for each batch; `.snapshot` stays on the first.
    @Test func consistencyModes() async throws {
        let (_, ticks) = try ticks(10)
        var perBatch = ticks.streamAll(batchSize: 5).makeAsyncIterator()
        var snapshot = ticks.streamAll(batchSize: 5, consistency: .snapshot).makeAsyncIterator()
        #expect(try await perBatch.next()?.id == 0)
        #expect(try await snapshot.next()?.id == 0)
        try await ticks.persist(Tick(id: 7, value: -1))
        var perBatchValues: [Int] = [], snapshotValues: [Int] = []
        while let tick = try await perBatch.next() { perBatchValues.append(tick.value) }
        while let tick = try await snapshot.next() { snapshotValues.append(tick.value) }
        #expect(perBatchValues[6] == -1)       // id 7, read in the second batch after the commit
        #expect(snapshotValues[6] == 49)       // the first batch's generation
    }

    /// A consumer that stops early leaves nothing pinned: no reader slot stays registered.
    @Test func consumerStoppingEarlyPinsNothing() async throws {
        let (store, ticks) = try ticks(1000)
        for consistency in [StreamConsistency.perBatch, .snapshot] {
            var seen = 0
            for try await _ in ticks.streamAll(batchSize: 16, consistency: consistency) {
                seen += 1
                if seen == 20 { break }
            }
            #expect(seen == 20)
            #expect(store.database.oldestReaderSnapshot == nil)
        }
        // Between batches of a `.perBatch` stream nothing is pinned either.
        var iterator = ticks.streamAll(batchSize: 16).makeAsyncIterator()
        _ = try await iterator.next()
        #expect(store.database.oldestReaderSnapshot == nil)
        // A `.snapshot` stream pins its generation until it ends.
        var pinned = ticks.streamAll(batchSize: 16, consistency: .snapshot).makeAsyncIterator()
        _ = try await pinned.next()
        #expect(store.database.oldestReaderSnapshot != nil)
        while try await pinned.next() != nil {}
        #expect(store.database.oldestReaderSnapshot == nil)
    }

    @Test func cancelledConsumerStops() async throws {
        let (_, ticks) = try ticks(1000)
        let task = Task {
            var seen = 0
            for try await _ in ticks.streamAll(batchSize: 10) {
                seen += 1
                if seen == 15 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return seen
        }
        await #expect(throws: CancellationError.self) { _ = try await task.value }
    }

    @Test func unknownOrUnbuiltIndexThrowsOnFirstNext() async throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(at: dir.path)
            let old = try store.datastore(BookFormatV1.self)
            try await old.persist(BookV1(id: UUID(), title: "Dune", author: "Frank Herbert", isbn: "isbn-1"))
        }
        let store = try Store(at: dir.path)
        let books = try store.datastore(BookFormat.self)   // the title index is not built yet
        await #expect(throws: DatastoreError.indexNotBuilt(datastore: "books", index: "title")) {
            _ = try await collect(books.stream(..., from: \.title))
        }
    }

    /// A million instances consumed slowly by another process: resident anonymous memory stays
    /// within a small multiple of one batch (an unbounded buffer would hold every instance).
    @Test func millionInstancesInBoundedMemory() async throws {
        let dir = TemporaryDirectory()
        let count = 1_000_000
        do {
            var options = DatabaseOptions()
            options.durability = .none
            let store = try Store(at: dir.path, options: options)
            _ = try store.datastore(TickFormat.self)
            // Bulk fill through the engine (envelopes as the typed layer writes them, no change
            // log): the typed write path costs three tree operations per instance in a debug build.
            let prefix = InstanceEnvelope.currentPrefix(format: TickFormat.self)
            for first in stride(from: 0, to: count, by: 100_000) {
                try store.database.write { tx in
                    let primary = try tx.tree(TickFormat.name)
                    for id in first..<(first + 100_000) {
                        try tx.put(id.orderedKeyBytes, try InstanceEnvelope.encode(Tick(id: id, value: id &* 7), format: TickFormat.self,
                                                                                   currentPrefix: prefix), in: primary)
                    }
                }
            }
        }
        let batchSize = 1024
        let child = try ChildProcess(["typed-tick-stream", dir.path, String(batchSize)])
        let line = await Task.detached { child.waitFor("streamed", timeout: 120) }.value ?? "no answer"
        print("[millionInstancesInBoundedMemory] \(line)")
        let fields = line.split(separator: " ")
        try #require(fields.count == 7 && fields[0] == "streamed", "child said: \(line)")
        #expect(fields[1] == "1000000")
        let anonGrowth = Int(fields[2].dropFirst("anon+".count)) ?? .max
        // One batch of decoded ticks is 1024 x 16 bytes; with the envelope views and the batch
        // array, a few hundred KiB at most. Allowed: 2 MiB (an unbounded buffer needs > 16 MiB).
        #expect(anonGrowth < 2 << 20, "resident anonymous memory grew by \(anonGrowth) bytes")
        // The measurement is able to see a buffer: loading 300,000 of them at once (4.8 MB of
        // ticks) raises resident anonymous memory past the limit.
        let controlGrowth = Int(fields[5].dropFirst("control+".count)) ?? 0
        #expect(controlGrowth > 2 << 20, "holding 300,000 instances grew resident memory by only \(controlGrowth) bytes")
        #expect(await Task.detached { child.waitForExit() }.value == 0)
    }
}
