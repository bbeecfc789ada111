import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// Entity trees written by something other than this build (a restored `entities.meta`, a
/// partial `strata load --replace`, a foreign writer): what this build cannot trust is
/// `EntityError.corrupt`, never a silent overwrite or two reads that disagree (found in review).
@Suite struct EntityCraftedStoreTests {
    /// Sets the stored entity sequence back to `sequence`.
    private func rewindSequence(to sequence: UInt64, in store: EntityStore<ReadWrite>) throws {
        try store.database.write { tx in
            try tx.put(EntityLayout.sequenceName, EntityLayout.sequenceBytes(sequence), in: try tx.tree(EntityLayout.meta))
        }
    }

    private func isCorrupt(_ error: any Error) -> Bool {
        if case EntityError.corrupt = error { return true }
        return false
    }

    /// `corrupt` for a reused sequence, with what to do about it (found in review: the reason
    /// named the cause only).
    private func isReusedSequence(_ error: any Error) -> Bool {
        if case EntityError.corrupt(let reason) = error { return reason.contains("restore entities.meta together with the other entities.* trees") }
        return false
    }

    @Test func aSequenceBehindTheTypesIndexIsCorruptNotAnOverwrite() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let a = EntityReference.new("t")
        let first = try #require(try await store.resolve([a])[a])        // sequence 0
        try rewindSequence(to: 0, in: store)
        await #expect { try await store.resolve([.new("t")]) } throws: { isReusedSequence($0) }
        #expect(try await store.entities(ofType: "t") == [first])
    }

    @Test func aSequenceBehindTheHistoryIsCorruptNotAnOverwrite() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let a = EntityReference.new("t")
        let id = try #require(try await store.resolve([a])[a])           // sequence 0
        let stamp = Date(timeIntervalSinceReferenceDate: 1000)
        try await store.set(["p": "x"], of: [.id(id)], at: stamp)         // history entry with sequence 1
        try rewindSequence(to: 1, in: store)
        // The same key, datestamp and sequence: the history key of the first entry again.
        await #expect { try await store.set(["p": "y"], of: [.id(id)], at: stamp) } throws: { isReusedSequence($0) }
        #expect(try await store.history(of: .id(id), key: "p").map(\.value) == [.string("x")])
    }

    @Test func aSequenceBehindTheValueIndexIsCorruptNotAnOverwrite() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let a = EntityReference.new("t")
        let b = EntityReference.new("t")
        let ids = try await store.resolve([a, b])                          // sequences 0, 1
        let (first, second) = (try #require(ids[a]), try #require(ids[b]))
        try await store.set(["p": "x"], of: [.id(first)])                 // values entry p+x+2
        try rewindSequence(to: 2, in: store)
        // Another entity's entry (another history key) with the same value and sequence.
        await #expect { try await store.set(["p": "x"], of: [.id(second)]) } throws: { isReusedSequence($0) }
        #expect(try await store.entities(where: "p", equals: "x") == [first])
    }

    @Test func aHeaderWithARepeatedKeyIsCorruptOnFullReads() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let ref = EntityReference.new("t", with: ["a": 1])
        let id = try #require(try await store.resolve([ref])[ref])
        try store.database.write { tx in
            let tree = try tx.tree(EntityLayout.entries)
            let stored = try #require(try tx.get(EntityLayout.headerKey(id), in: tree))
            var header = try stored.withUnsafeBytes { try RecordHeader($0) }
            var entries = try header.currentEntries()
            var body = OrderedKeyWriter(reservingCapacity: 16)
            PropertyEntry(.int(2), datestamp: entries[0].datestamp).encodeBody(into: &body)
            entries.append(.init(name: entries[0].name, datestamp: entries[0].datestamp, sequence: entries[0].sequence + 1, body: body.bytes))
            header.setCurrentEntries(entries)              // does not validate
            var bytes: [UInt8] = []
            header.encode(into: &bytes)
            try tx.put(EntityLayout.headerKey(id), bytes, in: tree)
        }
        await #expect { _ = try await store.records([.id(id)]) } throws: { isCorrupt($0) }
        await #expect { try await store.set(["b": 1], of: [.id(id)]) } throws: { isCorrupt($0) }
    }

    /// A NaN datestamp already stored (by an older build, or crafted) is superseded by the next
    /// entry of its key (found in review: `NaN <= d` is false, so every later `set` succeeded
    /// and was never current).
    @Test func aStoredNaNDatestampIsSupersededByTheNextEntry() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let stamp = Date(timeIntervalSinceReferenceDate: 1000)
        let ref = EntityReference.new("t")
        let id = try #require(try await store.set(["p": "x"], of: [ref], at: stamp)[ref])
        let nan = Date(timeIntervalSinceReferenceDate: .nan)
        try store.database.write { tx in
            let tree = try tx.tree(EntityLayout.entries)
            let stored = try #require(try tx.get(EntityLayout.headerKey(id), in: tree))
            var header = try stored.withUnsafeBytes { try RecordHeader($0) }
            var entries = try header.currentEntries()
            let old = EntityLayout.historyKey(id: id.bytes, name: entries[0].name, datestamp: stamp, sequence: entries[0].sequence)
            let body = try #require(try tx.get(old, in: tree)).bytes
            _ = try tx.delete(old, in: tree)
            try tx.put(EntityLayout.historyKey(id: id.bytes, name: entries[0].name, datestamp: nan, sequence: entries[0].sequence), body, in: tree)
            entries[0].datestamp = nan
            header.setCurrentEntries(entries)
            header.modified = nan
            var bytes: [UInt8] = []
            header.encode(into: &bytes)
            try tx.put(EntityLayout.headerKey(id), bytes, in: tree)
        }
        func storedHeader() throws -> RecordHeader {
            try store.database.read { tx in
                let stored = try #require(try tx.get(EntityLayout.headerKey(id), in: try tx.tree(EntityLayout.entries)))
                return try stored.withUnsafeBytes { try RecordHeader($0) }
            }
        }
        #expect(try storedHeader().currentEntries()[0].datestamp.timeIntervalSinceReferenceDate.isNaN)
        #expect(try await store.records([.id(id)])[.id(id)]?["p"] == "x")
        try await store.set(["p": "y"], of: [.id(id)], at: stamp)
        #expect(try await store.records([.id(id)])[.id(id)]?["p"] == "y")
        #expect(try storedHeader().currentEntries()[0].datestamp == stamp)
        #expect(try storedHeader().modified == stamp)
        try await store.set("p", to: "z", of: .id(id), at: stamp.addingTimeInterval(1))
        #expect(try await store.records([.id(id)])[.id(id)]?["p"] == "z")
    }
}
