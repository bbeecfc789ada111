import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// Array values nest at most `EntityValueCoding.maximumDepth` levels (found in review: decoding
/// recursed once per level without a limit, so a crafted body crashed the reader with a stack
/// overflow, and values nested too deep for Foundation's JSON writer could be stored but never
/// exported). Too deep stored bytes are `corrupt`; too deep values are refused (the write commits
/// nothing), by the API and by an import; everything the API accepts exports and imports back.
@Suite struct EntityValueDepthTests {
    /// A value of `depth` nested arrays around an integer (`depth` 0: the integer).
    private func nested(_ depth: Int) -> EntityValue {
        var value: EntityValue = .int(1)
        for _ in 0..<depth { value = .array([value]) }
        return value
    }

    /// A body (no label) of `depth` nested arrays, the innermost empty, built as bytes: a value
    /// this deep could not even be destroyed without overflowing the stack.
    private func nestedBody(_ depth: Int) -> [UInt8] {
        var body: [UInt8] = [0, 0]
        body.reserveCapacity(3 * depth + 4)
        for _ in 0..<depth { body += [EntityValueCoding.arrayTag, EntityValueCoding.elementMarker] }
        body += [EntityValueCoding.arrayTag, EntityValueCoding.arrayEnd]
        body += [UInt8](repeating: EntityValueCoding.arrayEnd, count: depth)
        return body
    }

    @Test func deeplyNestedStoredArrayIsCorruptNotACrash() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let ref = EntityReference.new("t", with: ["p": 1])
        let id = try #require(try await store.resolve([ref])[ref])
        let key = EntityLayout.historyKey(id: id.bytes, name: EntityLayout.encodedName("q"), datestamp: Date(), sequence: 1 << 40)
        let body = nestedBody(1_000_000)          // deeper than any thread's stack allows
        try store.database.write { tx in try tx.put(key, body, in: try tx.tree(EntityLayout.entries)) }
        await #expect(throws: EntityError.self) { _ = try await store.history(of: .id(id), key: "q") }
    }

    @Test func theDecoderReadsTheMaximumDepthAndRefusesOneMore() throws {
        let maximum = EntityValueCoding.maximumDepth
        let decoded = try nestedBody(maximum - 1).withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: Date()) }
        var depth = 0
        var value = decoded.value
        while case .array(let elements)? = value { depth += 1; value = elements.first }
        #expect(depth == maximum)
        #expect(throws: EntityError.corrupt(reason: "array values nested deeper than \(maximum) levels")) {
            try nestedBody(maximum).withUnsafeBytes { _ = try PropertyEntry.decodeBody($0, datestamp: Date()) }
        }
    }

    @Test func tooDeepValuesAreRefusedAndNothingCommits() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let maximum = EntityValueCoding.maximumDepth
        let tooDeep = nested(maximum + 1)
        let expected = EntityError.valueTooDeep(key: "p", depth: maximum + 1, maximum: maximum)
        await #expect(throws: expected) { try await store.set(["p": tooDeep], of: [.new("t")]) }
        await #expect(throws: expected) { try await store.set([EntityReference.new("t"): ["p": tooDeep]]) }
        await #expect(throws: expected) { try await store.set("p", to: tooDeep, of: .new("t")) }
        await #expect(throws: expected) { try await store.resolve([.new("t", with: ["p": tooDeep])]) }
        await #expect(throws: expected) { try await store.resolve([EntityReference.whereKey("p", equals: tooDeep, ofType: "t").createIfMissing()]) }
        await #expect(throws: expected) {
            try await store.write { tx in try tx.add(["p": [PropertyEntry(tooDeep, datestamp: Date())]], to: .new("t")) }
        }
        #expect(try await store.entities(ofType: "t").isEmpty)
    }

    @Test func everythingTheAPIAcceptsExportsAndImportsBack() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let deepest = nested(EntityValueCoding.maximumDepth)
        let ref = EntityReference.new("t", with: ["p": deepest])
        let id = try #require(try await store.resolve([ref])[ref])
        #expect(try await store.records([.id(id)])[.id(id)]?["p"] == deepest)
        let document = try await store.exportJSON()
        let copy = try EntityStore<ReadWrite>.inMemory()
        try await copy.importJSON(document)
        #expect(try await copy.records([.id(id)])[.id(id)]?["p"] == deepest)
        #expect(try await copy.exportJSON() == document)
    }

    @Test func anImportOfATooDeepValueIsInvalid() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        let maximum = EntityValueCoding.maximumDepth
        var value = #"{"int":1}"#
        for _ in 0...maximum { value = #"{"array":[\#(value)]}"# }
        let doc = #"{"format":"strata-entities","version":1,"mode":"full","entities":[{"id":"\#(UUID())","type":"t","created":0,"modified":0,"properties":{"p":[{"value":\#(value),"datestamp":0}]}}]}"#
        await #expect(throws: EntityError.self) { try await store.importJSON(Data(doc.utf8)) }
        do {
            try await store.importJSON(Data(doc.utf8))
        } catch EntityError.invalidInterchange {
        } catch {
            Issue.record("expected invalidInterchange, got \(error)")
        }
        #expect(try await store.entities(ofType: "t").isEmpty)
    }

    @Test func aCompactImportOfATooDeepValueIsInvalid() async throws {
        let store = try EntityStore<ReadWrite>.inMemory()
        var value = #"{"int":1}"#
        for _ in 0...EntityValueCoding.maximumDepth { value = #"{"array":[\#(value)]}"# }
        let doc = #"{"format":"strata-entities","version":1,"mode":"compact","entities":[{"id":"\#(UUID())","type":"t","created":0,"modified":0,"values":{"p":\#(value)}}]}"#
        await expectInvalidInterchange(store, Data(doc.utf8))
        #expect(try await store.entities(ofType: "t").isEmpty)
    }
}
