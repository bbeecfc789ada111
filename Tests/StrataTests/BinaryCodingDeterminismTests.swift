import Foundation
import Strata
import Testing

@Suite("Binary coder determinism")
struct BinaryCodingDeterminismTests {
    private let encoder = BinaryInstanceEncoder()

    @Test func sameValueSameBytes() throws {
        let library = ModelLibrary.sample()
        #expect(try encoder.encode(library) == encoder.encode(library))
    }

    @Test func dictionariesAndSetsDoNotDependOnInsertionOrder() throws {
        var generator = makeCodingTestGenerator("dictionary determinism")
        let keys = (0..<200).map { "k\($0)" }
        for _ in 0..<5 {
            var forward: [String: Int] = [:]
            var backward: [String: Int] = [:]
            let shuffled = keys.shuffled(using: &generator)
            for key in shuffled { forward[key] = key.count }
            for key in shuffled.reversed() { backward[key] = key.count }
            // Growing one dictionary from a different starting capacity changes its layout.
            var resized = [String: Int](minimumCapacity: 5000)
            for key in keys { resized[key] = key.count }
            let bytes = try encoder.encode(forward)
            #expect(try encoder.encode(backward) == bytes)
            #expect(try encoder.encode(resized) == bytes)
        }
        let uuids = (0..<50).map { _ in UUID() }
        let byUUID = Dictionary(uniqueKeysWithValues: uuids.enumerated().map { ($1, $0) })
        var byUUIDResized = [UUID: Int](minimumCapacity: 1000)
        for (index, uuid) in uuids.enumerated().reversed() { byUUIDResized[uuid] = index }
        #expect(try encoder.encode(byUUID) == encoder.encode(byUUIDResized))
        var set = Set<Int>(minimumCapacity: 1000)
        for value in (0..<300).reversed() { set.insert(value) }
        #expect(try encoder.encode(set) == encoder.encode(Set(0..<300)))
    }

    @Test func sortedOutputStillRoundTrips() throws {
        let decoder = BinaryInstanceDecoder()
        let dictionary = Dictionary(uniqueKeysWithValues: (0..<100).map { (UUID(), "v\($0)") })
        #expect(try decoder.decode([UUID: String].self, from: encoder.encode(dictionary)) == dictionary)
        let intKeyed = Dictionary(uniqueKeysWithValues: (-50..<50).map { ($0, $0 * 2) })
        #expect(try decoder.decode([Int: Int].self, from: encoder.encode(intKeyed)) == intKeyed)
    }
}
