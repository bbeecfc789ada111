import Foundation
import Strata
import Testing

@Suite("OrderedKey composites and prefix bounds")
struct OrderedKeyCompositeTests {
    @Test func leadingComponentPrefixesSortByComponent() {
        let values = [
            CompositeKey("a", 99), CompositeKey("ab", 0), CompositeKey("ab", 1), CompositeKey("abc", -5),
            CompositeKey("", 3), CompositeKey("a\0", 0), CompositeKey("a\0b", 0), CompositeKey("b", .min),
            CompositeKey("hell", 2), CompositeKey("hello", 1), CompositeKey("helloo", 0), CompositeKey("hellp", -1),
        ]
        // Component-wise order, spelled out (CompositeKey's own `<` compares the encodings).
        expectOrderPreserved(values, compare: { $0.components < $1.components ? -1 : ($1.components < $0.components ? 1 : 0) })
    }

    @Test func randomMixedComposites() {
        var generator = makeCodingTestGenerator("composites")
        let words = ["", "a", "a\0", "ab", "b", "\u{FF}", "😀"]
        let values = (0..<200).map { _ in
            CompositeKey(
                Bool.random(using: &generator) ? nil : Int16.random(in: -3...3, using: &generator),
                words.randomElement(using: &generator)!,
                [-1.0, 0.0, 2.5, .infinity].randomElement(using: &generator)!,
                KeyTestGenre.allCases.randomElement(using: &generator)!)
        }
        expectOrderPreserved(values, compare: { a, b in
            let first = optionalSign(a.components.0, b.components.0)
            if first != 0 { return first }
            let (left, right) = ((a.components.1, a.components.2, a.components.3), (b.components.1, b.components.2, b.components.3))
            return left < right ? -1 : (right < left ? 1 : 0)
        })
        expectTruncationsThrow(CompositeKey(Int16?.some(1), "x", 2.5, KeyTestGenre.jazz), as: CompositeKey<Int16?, String, Double, KeyTestGenre>.self)
    }

    @Test func compositesNest() {
        let values = [
            CompositeKey(CompositeKey("a", 1), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1))),
            CompositeKey(CompositeKey("a", 2), UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
            CompositeKey(CompositeKey("", 9), UUID(uuid: (9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
        ]
        expectOrderPreserved(values, compare: { a, b in
            let (left, right) = (a.components.0.components, b.components.0.components)
            if left != right { return left < right ? -1 : 1 }
            return comparableSign(a.components.1, b.components.1)
        })
    }

    @Test func hashingFollowsEquality() {
        let keys: Set = [CompositeKey("a", 1), CompositeKey("a", 1), CompositeKey("a", 2)]
        #expect(keys.count == 2)
    }

    @Test func prefixUpperBoundExamples() {
        #expect(OrderedKeyWriter.prefixUpperBound(of: []) == nil)
        #expect(OrderedKeyWriter.prefixUpperBound(of: [0xFF, 0xFF]) == nil)
        #expect(OrderedKeyWriter.prefixUpperBound(of: [1, 2]) == [1, 3])
        #expect(OrderedKeyWriter.prefixUpperBound(of: [1, 0xFF]) == [2])
        #expect(OrderedKeyWriter.prefixUpperBound(of: [0, 0xFF, 0xFF]) == [1])
    }

    @Test func prefixUpperBoundSeparatesRangeScans() throws {
        var generator = makeCodingTestGenerator("prefix bounds")
        let authors = ["", "a", "a\0", "ab", "b", "bob", "😀"]
        let keys = (0..<300).map { _ in
            CompositeKey(authors.randomElement(using: &generator)!, Int.random(in: -3...3, using: &generator))
        }
        for author in authors {
            let prefix = author.orderedKeyBytes
            let bound = try #require(OrderedKeyWriter.prefixUpperBound(of: prefix))
            for key in keys {
                let bytes = key.orderedKeyBytes
                let inRange = !bytes.lexicographicallyPrecedes(prefix) && bytes.lexicographicallyPrecedes(bound)
                #expect(inRange == (key.components.0 == author), "\(key) vs author \(author)")
            }
        }
    }
}
