import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The read paths that skip general machinery: bulk records through the fixed-width group
/// lookup (more entities than one lookup group, missing and deleted ones, headers a write has not
/// written yet; checked against each key's newest history entry), a history read by one descent and a leaf walk (histories longer than a leaf,
/// beside the entity's other keys and its neighbours'), and the decoding of unlabelled doubles
/// without the general decoder (damaged bytes: the typed error the general decoder gives).
@Suite struct EntityReadPathTests {
    private static func day(_ n: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(n) * 86_400) }

    @Test func bulkRecordsMatchTheNewestHistoryEntries() throws {
        let store = try EntityStore.inMemory()
        let ids = (0..<150).map { _ in EntityID() }
        try store.writeNow(at: Self.day(1)) { tx in
            for (index, id) in ids.enumerated() {
                try tx.set(["name": .string("n\(index)"), "age": .int(index), "score": .double(Double(index) / 3)], of: [.id(id).createIfMissing(as: "item")])
            }
        }
        try store.writeNow(at: Self.day(2)) { tx in
            try tx.delete(ids.suffix(10).map { .id($0) })
            try tx.remove(["age"], of: ids.prefix(5).map { .id($0) })
        }
        let references = ids.map { EntityReference.id($0) } + [.id(EntityID()), .id(ids[7])]
        func check(_ tx: EntityReadContext, expectedAge: (Int) -> Int?) throws {
            let records = try tx.records(references, keys: ["score", "age", "name", "missing"])
            #expect(records.count == 140) // 10 deleted, one missing, one asked for twice
            for (index, id) in ids.enumerated() {
                let record = records[.id(id)]
                if index >= 140 {
                    #expect(record == nil)
                    continue
                }
                // Independently of the header: each key's newest entry, read from its history.
                var newest: [String: PropertyEntry] = [:]
                for key in ["name", "age", "score"] {
                    if let last = try tx.history(of: .id(id), key: key).last, last.value != nil { newest[key] = last }
                }
                #expect(record?.id == id)
                #expect(record?.properties == newest)
                #expect(record?["name"] == .string("n\(index)"))
                #expect(record?["age"] == expectedAge(index).map { .int($0) })
                #expect(record?["score"] == .double(Double(index) / 3))
                #expect(record?.properties.count == (expectedAge(index) == nil ? 2 : 3))
            }
            // All properties (no keys asked for).
            #expect(try tx.records([.id(ids[20])])[.id(ids[20])]?.properties.keys.sorted() == ["age", "name", "score"])
        }
        try store.readNow { tx in try check(tx, expectedAge: { $0 < 5 ? nil : $0 }) }
        // In a write: headers changed in it (read from memory) beside stored ones.
        try store.writeNow(at: Self.day(3)) { tx in
            try tx.set(["age": .int(-1)], of: ids.prefix(40).suffix(20).map { .id($0) })
            try check(tx, expectedAge: { $0 < 5 ? nil : $0 >= 20 && $0 < 40 ? -1 : $0 })
        }
    }

    @Test func longHistoriesAreReadWholeAndAlone() throws {
        let store = try EntityStore.inMemory()
        let ids = (0..<3).map { _ in EntityID() }
        // Long string values: one key's history spans several leaves.
        for round in 0..<400 {
            try store.writeNow(at: Self.day(round)) { tx in
                for id in ids {
                    try tx.set(["a": .string("a \(round) " + String(repeating: "x", count: 60)), "b": .int(round)], of: [.id(id).createIfMissing(as: "item")])
                }
            }
        }
        func check(_ tx: EntityReadContext, rounds: Int) throws {
            for id in ids {
                let a = try tx.history(of: .id(id), key: "a")
                #expect(a.map(\.value) == (0..<rounds).map { .string("a \($0) " + String(repeating: "x", count: 60)) })
                #expect(a.map(\.datestamp) == (0..<rounds).map(Self.day))
                #expect(try tx.history(of: .id(id), key: "b").map(\.value) == (0..<rounds).map { .int($0) })
                #expect(try tx.history(of: .id(id), key: "c").isEmpty)
            }
            #expect(try tx.history(of: .id(EntityID()), key: "a").isEmpty)
        }
        try store.readNow { tx in try check(tx, rounds: 400) }
        try store.writeNow(at: Self.day(400)) { tx in
            try tx.set(["a": .string("a 400 " + String(repeating: "x", count: 60)), "b": .int(400)], of: ids.map { .id($0) })
            try check(tx, rounds: 401)
        }
    }

    @Test func unlabelledDoublesRoundTripAndDamagedOnesAreTypedErrors() throws {
        let stamp = Self.day(1)
        for value in [0.0, -0.0, 1.5, -2.25, .infinity, -.infinity, .nan, .greatestFiniteMagnitude, -.leastNonzeroMagnitude] {
            var writer = OrderedKeyWriter(reservingCapacity: 16)
            PropertyEntry(.double(value), datestamp: stamp).encodeBody(into: &writer)
            let decoded = try writer.bytes.withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: stamp) }
            guard case .double(let double) = decoded.value else {
                Issue.record("\(value) decoded as \(String(describing: decoded.value))")
                continue
            }
            #expect(double.isNaN ? value.isNaN : double == value && double.sign == (value == 0 ? .plus : value.sign))
            #expect(decoded.type == nil)
        }
        // An unlabelled double body: label terminator, tag, 8 ordered bytes. A NaN other than
        // `.nan` and a -0.0 are never written; a cut-short body neither.
        func body(_ ordered: UInt64) -> [UInt8] { [0, 0, EntityValueCoding.doubleTag] + withUnsafeBytes(of: ordered.bigEndian) { Array($0) } }
        let negativeZero = ~(-0.0).bitPattern
        let otherNaN = Double(nan: 5, signaling: false).bitPattern | (1 << 63)
        // (The general decoder names them with the ordered-key coder's error.)
        for damaged in [body(negativeZero), body(otherNaN), Array(body(0).prefix(10))] {
            do {
                let entry = try damaged.withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: stamp) }
                Issue.record("\(damaged) decoded as \(entry)")
            } catch is EntityError {
            } catch is OrderedKeyError {
            } catch {
                Issue.record("untyped error \(error)")
            }
        }
    }

    /// The fields before the current entries, read at their fixed offsets: each kind of damage
    /// is a typed error naming it, through the read path's decoder and the whole-header one.
    @Test func damagedHeaderFieldsAreTypedErrors() throws {
        let bytes = try RecordHeaderTests.header().encoded()
        var badStatus = bytes
        badStatus[0] = 2
        var negativeZero = bytes // created: the ordered form of -0.0
        for offset in 1..<9 { negativeZero[offset] = offset == 1 ? 0x7F : 0xFF }
        let unterminated = Array(bytes.prefix(25)) + Array("person".utf8)
        var badEscape = bytes
        badEscape[25 + 2] = 0
        badEscape[25 + 3] = 7
        let cases: [([UInt8], String)] = [
            (badStatus, "record status 2"),
            (negativeZero, "datestamp with a non-canonical NaN or -0.0"),
            (Array(bytes.prefix(24)), "record header of 24 bytes"),
            (unterminated, "type label without its terminator"),
            (badEscape, "type label with 0x00 followed by 7"),
        ]
        for (damaged, reason) in cases {
            #expect(throws: EntityError.corrupt(reason: reason)) {
                try damaged.withUnsafeBytes { _ = try RecordHeader.decodeFields($0, typeName: RecordHeader.decodeName) }
            }
            #expect(throws: EntityError.corrupt(reason: reason)) { try damaged.withUnsafeBytes { _ = try RecordHeader($0) } }
        }
    }
}
