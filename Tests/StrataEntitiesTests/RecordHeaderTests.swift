import Foundation
import Strata
import Testing
@testable import StrataEntities

/// The entity header's byte form (`RecordHeader`): what it keeps of each current entry, and the
/// typed errors a damaged header gets instead of a wrong answer.
@Suite struct RecordHeaderTests {
    static func header() throws -> RecordHeader {
        var header = RecordHeader(isDeleted: false, created: Date(timeIntervalSinceReferenceDate: 1), modified: Date(timeIntervalSinceReferenceDate: 2),
                                  sequence: 7, type: "person")
        let short = PropertyEntry(.int(1815), datestamp: Date(timeIntervalSinceReferenceDate: 2))
        let long = PropertyEntry(.string(String(repeating: "z", count: 200)), datestamp: Date(timeIntervalSinceReferenceDate: 1))
        for (key, entry, sequence) in [("name", long, UInt64(9)), ("born", short, UInt64(8))] {
            var body = OrderedKeyWriter()
            entry.encodeBody(into: &body)
            let name = EntityLayout.encodedName(key)
            let located = try header.locateCurrent(named: name)
            body.bytes.withUnsafeBytes { header.setCurrent(name: name, datestamp: entry.datestamp, sequence: sequence, body: $0, at: located) }
        }
        return header
    }

    @Test func roundTripsKeepingShortBodiesOnly() throws {
        let header = try Self.header()
        #expect(try header.currentEntries().map(\.name) == [EntityLayout.encodedName("born"), EntityLayout.encodedName("name")], "sorted by key")
        let current = try header.currentEntries()
        #expect(current[0].body != nil && current[1].body == nil, "a 200-byte body stays in the history")
        let decoded = try header.encoded().withUnsafeBytes { try RecordHeader($0) }
        #expect(decoded == header)
    }

    @Test func damagedHeadersGetTypedErrors() throws {
        var unordered = try Self.header()
        unordered.setCurrentEntries(try unordered.currentEntries().reversed())
        #expect(throws: EntityError.corrupt(reason: "header entries out of key order")) {
            try unordered.encoded().withUnsafeBytes { _ = try RecordHeader($0) }
        }
        let bytes = try Self.header().encoded()
        // The last entry is the history-only one: its storage mark is the last byte.
        var badMark = bytes
        badMark[badMark.count - 1] = 7
        #expect(throws: EntityError.corrupt(reason: "header entry storage 7")) {
            try badMark.withUnsafeBytes { _ = try RecordHeader($0) }
        }
        // Every cut ends in a typed error (or, at an entry boundary, a header with fewer entries).
        for length in 0..<bytes.count {
            do {
                let partial = try Array(bytes.prefix(length)).withUnsafeBytes { try RecordHeader($0) }
                #expect(try partial.currentEntries().count < 2, "cut at \(length)")
            } catch is EntityError {
            } catch is OrderedKeyError {
            }
        }
    }
}

extension RecordHeader {
    /// The stored form, as the write path puts it (`encode(into:)`), in a buffer of its own.
    func encoded() -> [UInt8] {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return bytes
    }
}
