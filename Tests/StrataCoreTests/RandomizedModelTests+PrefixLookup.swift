import Foundation
import Testing
@testable import StrataCore

/// `WriteTransaction.withFirstKey(startingWith:)`, the unique-index check that answers from the
/// leaf of the previous insert when it can: after every put of a run (in order, reversed,
/// clustered, random, with deletes that forget the hint, at the top level and in nested levels
/// kept, rolled back or two deep), prefixes near the key
/// just put, short prefixes that many keys share (their keys span leaves, so the upper separator
/// starts with them), and absent ones are looked up and compared with the model.
extension RandomizedModelTests {
    @Test func prefixLookupMatchesModel() throws {
        var (random, dir, options) = modelStore("prefixLookupMatchesModel")
        let db = try Database(path: dir.path, options: options)
        var model: [[UInt8]] = []   // sorted keys of the tree
        var hinted = 0
        var lookups = 0
        var hintedLookups = 0

        /// An index-like key: a value `v<n>` (variable length, so values are prefixes of others)
        /// then `#` and an identifier.
        func key(_ n: Int, id: Int) -> [UInt8] { Array("v\(n)#".utf8) + withUnsafeBytes(of: UInt32(id).bigEndian, Array.init) }
        func expected(_ prefix: [UInt8]) -> [UInt8]? {
            var low = 0, high = model.count
            while low < high {
                let mid = (low + high) / 2
                if model[mid].lexicographicallyPrecedes(prefix) { low = mid + 1 } else { high = mid }
            }
            return low < model.count && model[low].starts(with: prefix) ? model[low] : nil
        }
        func insertSorted(_ key: [UInt8]) {
            var low = 0, high = model.count
            while low < high {
                let mid = (low + high) / 2
                if model[mid].lexicographicallyPrecedes(key) { low = mid + 1 } else { high = mid }
            }
            if low < model.count, model[low] == key { return }
            model.insert(key, at: low)
        }
        func check(_ prefix: [UInt8], in tx: WriteTransaction, tree: Tree) throws {
            let answeredBefore = tx.leafHintLookups
            let found = try prefix.withUnsafeBytes { bytes in
                try tx.withFirstKey(startingWith: bytes, in: tree) { $0.map(Array.init) }
            }
            #expect(found == expected(prefix), "prefix \(String(decoding: prefix, as: UTF8.self))")
            lookups += 1
            if tx.leafHintLookups > answeredBefore { hintedLookups += 1 }
        }

        struct Abort: Error {}
        for _ in 0..<40 {
            let before = model
            let aborts = Int.random(in: 0..<10, using: &random) == 0
            do {
                try db.write { tx in
                    let tree = try tx.openOrCreateTree("index")
                    /// One run of puts and lookups (in order, reversed, clustered or random).
                    func run() throws {
                        let length = Int.random(in: 1...300, using: &random)
                        let start = Int.random(in: 0..<5_000, using: &random)
                        let shape = Int.random(in: 0..<4, using: &random)
                        for step in 0..<length {
                            let n = switch shape {
                            case 0: start + step
                            case 1: start + length - step
                            case 2: start + Int.random(in: -30...30, using: &random)
                            default: Int.random(in: 0..<5_000, using: &random)
                            }
                            if Int.random(in: 0..<60, using: &random) == 0, let victim = model.randomElement(using: &random) {
                                try tx.delete(victim, in: tree)
                                model.removeAll { $0 == victim }
                            } else {
                                let k = key(n, id: Int.random(in: 0..<4, using: &random))
                                let hintsBefore = tx.leafHintInserts
                                try tx.put(k, [UInt8(truncatingIfNeeded: n)], in: tree)
                                if tx.leafHintInserts > hintsBefore { hinted += 1 }
                                insertSorted(k)
                            }
                            for candidate in [n, n + 1, n - 1, n + 7] {
                                try check(Array("v\(candidate)#".utf8), in: tx, tree: tree)
                            }
                            try check(Array("v\(n)".utf8), in: tx, tree: tree)                // shared by v<n>0… too
                            try check(Array("v\(n / 100)".utf8), in: tx, tree: tree)          // many keys, several leaves
                            try check(Array("v\(n)#".utf8) + [0xFF], in: tx, tree: tree)      // absent
                            try check([], in: tx, tree: tree)                                  // every key
                        }
                    }
                    // Nested levels: a run in a nested transaction that is kept, one that is
                    // rolled back (the model forgets its keys), and one two levels deep.
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        try tx.nested { _ in try run() }
                    case 1:
                        let beforeNested = model
                        do {
                            try tx.nested { _ in
                                try run()
                                throw Abort()
                            }
                        } catch is Abort {
                            model = beforeNested
                        }
                    case 2:
                        try tx.nested { _ in try tx.nested { _ in try run() } }
                    default:
                        try run()
                    }
                    if aborts { throw Abort() }
                }
            } catch is Abort {
                model = before
            }
        }
        #expect(hinted > 0 && lookups > 1_000 && hintedLookups > 0)
        try db.read { tx in
            let tree = try tx.tree("index")
            var keys: [[UInt8]] = []
            try tx.scan(tree) { key, _ in keys.append(key.bytes); return true }
            #expect(keys == model)
        }
    }
}
