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

    /// The encoder recognises dictionaries and sets whatever their element types, nested inside
    /// other values too (it looks for them only among one-word types, which both are): built in
    /// opposite insertion orders from different capacities, each encodes to the same bytes.
    @Test func everyDictionaryAndSetShapeIsSorted() throws {
        struct Holder: Codable {
            var tags: Set<String>
            var scores: [Int8: Double]
            var nested: [String: Set<UUID>]
        }
        func grown<Key: Hashable, Value>(_ pairs: [(Key, Value)], reversed: Bool) -> [Key: Value] {
            var dictionary = [Key: Value](minimumCapacity: reversed ? 4096 : 0)
            for (key, value) in reversed ? pairs.reversed() : pairs { dictionary[key] = value }
            return dictionary
        }
        func grown<Element: Hashable>(_ elements: [Element], reversed: Bool) -> Set<Element> {
            var set = Set<Element>(minimumCapacity: reversed ? 4096 : 0)
            for element in reversed ? elements.reversed() : elements { set.insert(element) }
            return set
        }
        let words = (0..<120).map { "w\($0)" }
        let uuids = (0..<40).map { _ in UUID() }
        let scores = (-60..<60).map { (Int8($0), Double($0) / 3) }
        let nested = words.prefix(20).map { ($0, Set(uuids.shuffled().prefix(5))) }
        for reversed in [false, true] {
            let other = !reversed
            #expect(try encoder.encode(grown(words, reversed: reversed)) == encoder.encode(grown(words, reversed: other)))
            #expect(try encoder.encode(grown(uuids, reversed: reversed)) == encoder.encode(grown(uuids, reversed: other)))
            #expect(try encoder.encode(grown(scores, reversed: reversed)) == encoder.encode(grown(scores, reversed: other)))
            let holder = Holder(tags: grown(words, reversed: reversed), scores: grown(scores, reversed: reversed),
                                nested: grown(nested, reversed: reversed))
            let mirrored = Holder(tags: grown(words, reversed: other), scores: grown(scores, reversed: other),
                                  nested: grown(nested, reversed: other))
            #expect(try encoder.encode(holder) == encoder.encode(mirrored))
        }
    }

    @Test func sortedOutputStillRoundTrips() throws {
        let decoder = BinaryInstanceDecoder()
        let dictionary = Dictionary(uniqueKeysWithValues: (0..<100).map { (UUID(), "v\($0)") })
        #expect(try decoder.decode([UUID: String].self, from: encoder.encode(dictionary)) == dictionary)
        let intKeyed = Dictionary(uniqueKeysWithValues: (-50..<50).map { ($0, $0 * 2) })
        #expect(try decoder.decode([Int: Int].self, from: encoder.encode(intKeyed)) == intKeyed)
    }
}
