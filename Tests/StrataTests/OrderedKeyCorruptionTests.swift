import Foundation
import Strata
import Testing

@Suite("OrderedKey corrupt input")
struct OrderedKeyCorruptionTests {
    /// Decodes random byte strings: each must either throw `OrderedKeyError` or decode to a
    /// value whose encoding is exactly the input (every accepted key is canonical).
    private func fuzz<T: OrderedKey>(_ type: T.Type, using generator: inout CodingTestGenerator, iterations: Int = 400) {
        var failures: [String] = []
        for _ in 0..<iterations {
            let bytes = generator.bytes(count: Int.random(in: 0...24, using: &generator))
            do {
                let value = try T(orderedKeyBytes: bytes)
                if value.orderedKeyBytes != bytes { failures.append("\(bytes) decoded to non-canonical \(value)") }
            } catch is OrderedKeyError {
                continue
            } catch {
                failures.append("\(bytes) threw unexpected \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test func randomBytesNeverCrash() {
        var generator = makeCodingTestGenerator("ordered key fuzz")
        fuzz(Int32.self, using: &generator)
        fuzz(Double.self, using: &generator)
        fuzz(Bool.self, using: &generator)
        fuzz(OrderedBytes.self, using: &generator)
        fuzz(UUID.self, using: &generator)
        fuzz(Int?.self, using: &generator)
        fuzz(CompositeKey<Bool, Int8, Float>.self, using: &generator)
        fuzz(KeyTestGenre.self, using: &generator)
    }

    @Test func randomBytesAsStringsNeverCrash() {
        var generator = makeCodingTestGenerator("string fuzz")
        var failures: [String] = []
        for _ in 0..<1000 {
            var bytes = generator.bytes(count: Int.random(in: 0...12, using: &generator)).map { $0 % 4 == 0 ? 0 : $0 }
            if Bool.random(using: &generator) { bytes += [0, 0] }
            do {
                let value = try String(orderedKeyBytes: bytes)
                if value.orderedKeyBytes != bytes { failures.append("\(bytes) → non-canonical \(value.debugDescription)") }
            } catch is OrderedKeyError {
                continue
            } catch {
                failures.append("\(bytes) threw unexpected \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    @Test func errorsDescribeTheProblem() {
        do {
            _ = try Int64(orderedKeyBytes: [1, 2, 3])
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("truncated"))
            #expect("\(error)".contains("needed 8"))
        }
    }
}
