import Foundation
import Strata
import StrataCore
import Testing
@testable import StrataEntities

/// The write paths that skip general machinery: keys and entries appended in one piece through a
/// cursor (the same bytes as part by part), an unlabelled entry's body written without the
/// string encoder, references hashed by their matched value alone (equal ones hash equally, and
/// a bulk get-or-create of many names still resolves each to its own entity), and ascending
/// equality queries by a prefix walk of the value index (damaged entries under the prefix get
/// the general scan's answer: a typed error, or skipped).
@Suite struct EntityWritePathTests {
    @Test func unlabelledBodiesAreTheGeneralEncoding() throws {
        let values: [EntityValue?] = [nil, .int(-3), .string(""), .string("a\u{0}b"), .double(.nan), .array([.bool(true)])]
        for value in values {
            for label in [nil, "", "email", "e\u{301}"] as [String?] {
                var fast = OrderedKeyWriter(reservingCapacity: 16)
                PropertyEntry(value, datestamp: .distantPast, type: label).encodeBody(into: &fast)
                var general = OrderedKeyWriter(reservingCapacity: 16)
                general.write(label ?? "")
                if let value { EntityValueCoding.encode(value, into: &general) } else { general.writeByte(EntityValueCoding.tombstoneTag) }
                #expect(fast.bytes == general.bytes, "\(String(describing: value)) \(String(describing: label))")
                let decoded = try fast.bytes.withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: .distantPast) }
                // An empty label reads back as none (both encode as "").
                #expect(decoded == PropertyEntry(value, datestamp: .distantPast, type: label?.isEmpty == true ? nil : label))
            }
        }
    }

    @Test func referencesHashByTheirMatchedValue() {
        let pairs: [(EntityReference, EntityReference)] = [
            (.named("\u{E9}", ofType: "p"), .named("e\u{301}", ofType: "p")),
            (.whereKey("k", equals: .double(-0.0)), .whereKey("k", equals: .double(0.0))),
            (.named("Ada", ofType: "p").createIfMissing(with: ["x": 1]), .named("Ada", ofType: "p")),
        ]
        for (lhs, rhs) in pairs {
            #expect(lhs.hashValue == rhs.hashValue, "\(lhs) \(rhs)")
            #expect(lhs.identity == rhs.identity && lhs.identity.hashValue == rhs.identity.hashValue, "\(lhs) \(rhs)")
        }
        // Same value, other key or type: one hash, distinct keys.
        let distinct: [EntityReference] = [.named("Ada", ofType: "p"), .named("Ada", ofType: "q"), .named("Ada"), .whereKey("alias", equals: "Ada")]
        #expect(Set(distinct).count == 4 && Set(distinct.map(\.identity)).count == 4)
    }

    @Test func bulkGetOrCreateResolvesEachNameOnce() throws {
        let store = try EntityStore.inMemory()
        let names = (0..<300).map { "n\($0 % 200)" } // 100 named twice
        let ids = try store.writeNow { tx in
            let references = names.map { EntityReference.named($0, ofType: "item").createIfMissing() }
            let ids = try tx.resolve(references)
            #expect(tx.createdEntities.count == 200)
            return ids
        }
        #expect(Set(ids.values).count == 200)
        try store.writeNow { tx in
            // Same names again (some of another type): found, or created for the other type.
            let references = names.prefix(150).map { EntityReference.named($0, ofType: "item").createIfMissing() }
                + names.prefix(10).map { EntityReference.named($0, ofType: "other").createIfMissing() }
            let again = try tx.resolve(references)
            // Looked up by the references the dictionaries are keyed by (a plain `.named` is
            // another reference: both sides would be nil).
            for name in names.prefix(150) {
                let reference = EntityReference.named(name, ofType: "item").createIfMissing()
                let first = try #require(ids[reference], "\(name)")
                #expect(again[reference] == first, "\(name)")
            }
            #expect(tx.createdEntities.count == 10)
        }
    }

    @Test func damagedIndexEntriesUnderAnEqualityPrefixGetTheGeneralAnswer() throws {
        let store = try EntityStore.inMemory()
        let ids = try store.writeNow { tx in
            try (0..<3).map { _ in try #require(try tx.resolve([.new("item", with: ["name": "Ada"])]).values.first) }
        }
        let prefix = EntityLayout.encodedName("name") + EntityValue.string("Ada").orderedBytes
        func put(_ key: [UInt8], _ value: [UInt8]) throws {
            try store.database.write { tx in try tx.put(key, value, in: try tx.tree(EntityLayout.values)) }
        }
        // A key with bytes after the value (no writer makes one) sorts after the plain entries
        // and is skipped, as the general scan skips it; with a limit the walk stops before it.
        try put(prefix + [7] + EntityLayout.sequenceBytes(1), ids[0].bytes)
        #expect(try store.readNow { try $0.entities(where: "name", equals: "Ada") } == ids)
        #expect(try store.readNow { try $0.entities(where: "name", equals: "Ada", limit: 2) } == Array(ids.prefix(2)))
        // An identifier of the wrong length: corrupt, from either path.
        try put(prefix + EntityLayout.sequenceBytes(0), [1, 2, 3])
        #expect(throws: EntityError.self) { try store.readNow { try $0.entities(where: "name", equals: "Ada") } }
        #expect(throws: EntityError.self) { try store.writeNow { tx in try tx.resolve([.named("Ada", ofType: "item").createIfMissing()]) } }
    }

    /// What a create stores, key by key, against keys built independently of the write path
    /// (`EntityLayout.historyKey`: the ordered-key writer; `EntityLayout.indexedValue`: the
    /// value's ordered bytes, cut to the room a key leaves): the `entries` tree holds the header
    /// and exactly the history entries, the `values` tree exactly the index entries (a long value
    /// truncated and marked so).
    @Test func storedHistoryAndIndexKeysAreTheLayoutsKeys() throws {
        let store = try EntityStore.inMemory()
        let created = Date(timeIntervalSinceReferenceDate: 12_345.5)
        let long = EntityValue.string(String(repeating: "y", count: store.database.maximumKeySize))
        let properties: [String: EntityValue] = ["name": "Ada", "n": -3, "notes": long, "e\u{301}": .double(0.25), "flag": true]
        let id = try store.writeNow(at: created) { tx in try #require(try tx.resolve([.new("thing", with: properties)]).values.first) }
        var expectedEntries: [[UInt8]: [UInt8]] = [:]
        var expectedValues: [[UInt8]: [UInt8]] = [:]
        let (stored, storedValues) = try store.database.read { tx in
            var entries: [[UInt8]: [UInt8]] = [:]
            var values: [[UInt8]: [UInt8]] = [:]
            try tx.scan(try tx.tree(EntityLayout.entries)) { key, value in
                entries[Array(key)] = Array(value)
                return true
            }
            try tx.scan(try tx.tree(EntityLayout.values)) { key, value in
                values[Array(key)] = Array(value)
                return true
            }
            return (entries, values)
        }
        let headerBytes = try #require(stored[EntityLayout.headerKey(id)])
        let header = try headerBytes.withUnsafeBytes { try RecordHeader($0) }
        let current = try header.currentEntries()
        #expect(current.count == properties.count)
        expectedEntries[EntityLayout.headerKey(id)] = headerBytes
        for (key, value) in properties {
            let name = EntityLayout.encodedName(key)
            let entry = try #require(current.first { $0.name == name }, "\(key)")
            var body = OrderedKeyWriter(reservingCapacity: 16)
            PropertyEntry(value, datestamp: created).encodeBody(into: &body)
            expectedEntries[EntityLayout.historyKey(id: id.bytes, name: name, datestamp: created, sequence: entry.sequence)] = body.bytes
            let indexed = EntityLayout.indexedValue(value.orderedBytes, name: name, maximumKeySize: store.database.maximumKeySize)
            #expect(indexed.truncated == (key == "notes"), "\(key)")
            expectedValues[name + indexed.bytes + EntityLayout.sequenceBytes(entry.sequence)] = id.bytes + (indexed.truncated ? [EntityLayout.truncatedMark] : [])
        }
        #expect(stored == expectedEntries)
        #expect(storedValues == expectedValues)
    }

    @Test func partsAppendedInOnePieceAreThePartByPartBytes() {
        let id = EntityID()
        let dates = [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: -1.5), .distantFuture,
                     Date(timeIntervalSinceReferenceDate: .infinity), Date(timeIntervalSinceReferenceDate: .nan)]
        for (index, date) in dates.enumerated() {
            let name = EntityLayout.encodedName("key\(index)")
            let body: [UInt8] = Array(repeating: UInt8(index), count: index * 3)
            var byParts: [UInt8] = [9]
            byParts.appendID(id)
            byParts.appendBytes(name)
            byParts.appendOrderedDate(date)
            byParts.appendBigEndian(UInt64(index) << 40 | 7)
            byParts.append(1)
            byParts.appendBigEndian(UInt32(body.count))
            byParts.appendBytes(body)
            var inOnePiece: [UInt8] = [9]
            inOnePiece.appendParts(count: 16 + name.count + 8 + 8 + 1 + 4 + body.count) { cursor in
                cursor.writeID(id)
                cursor.write(name)
                cursor.writeOrderedDate(date)
                cursor.writeBigEndian(UInt64(index) << 40 | 7)
                cursor.writeByte(1)
                cursor.writeBigEndian(UInt32(body.count))
                body.withUnsafeBytes { cursor.write($0) }
            }
            #expect(inOnePiece == byParts, "\(date)")
        }
    }
}
