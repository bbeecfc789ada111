import Foundation
import Testing
@testable import StrataCore

/// `WriteTransaction.withFirstKey(startingWith:beforeInsertingInto:)`, the unique-index check that
/// copies the path its insert will take: for random values (new ones, ones stored already, short
/// prefixes many keys share, at the top level and in nested levels kept or rolled back) its answer
/// is the model's, the put of `value ++ identifier` that follows mostly goes through the hint it
/// left, a lookup that is not followed by a put changes no entry, and the tree ends equal to the
/// model (checked after every commit and after reopening).
extension RandomizedModelTests {
    @Test func prefixInsertLookupMatchesModel() throws {
        var (random, dir, options) = modelStore("prefixInsertLookupMatchesModel")
        var db = try Database(path: dir.path, options: options)
        var model: [[UInt8]] = []   // sorted keys of the tree
        var puts = 0
        var hintedPuts = 0

        func value(_ n: Int) -> [UInt8] { Array("v\(n)#".utf8) }
        func position(of key: [UInt8]) -> Int {
            var low = 0, high = model.count
            while low < high {
                let mid = (low + high) / 2
                if model[mid].lexicographicallyPrecedes(key) { low = mid + 1 } else { high = mid }
            }
            return low
        }
        func expected(_ prefix: [UInt8]) -> [UInt8]? {
            let low = position(of: prefix)
            return low < model.count && model[low].starts(with: prefix) ? model[low] : nil
        }
        func treeKeys(_ db: Database) throws -> [[UInt8]] {
            try db.read { tx in
                guard let tree = try tx.treeIfPresent("index") else { return [] }
                var keys: [[UInt8]] = []
                try tx.scan(tree) { key, _ in
                    keys.append(Array(key.buffer))
                    return true
                }
                return keys
            }
        }

        struct Abort: Error {}
        for round in 0..<30 {
            let before = model
            do {
                try db.write { tx in
                    let tree = try tx.openOrCreateTree("index")
                    func step() throws {
                        let n = Int.random(in: 0..<4_000, using: &random)
                        // Mostly whole values (as a unique index asks), sometimes a short prefix.
                        let prefix = Int.random(in: 0..<8, using: &random) == 0 ? Array(value(n).prefix(2)) : value(n)
                        let found = try prefix.withUnsafeBytes { bytes in
                            try tx.withFirstKey(startingWith: bytes, beforeInsertingInto: tree) { $0.map(Array.init) }
                        }
                        #expect(found == expected(prefix), "prefix \(String(decoding: prefix, as: UTF8.self))")
                        #expect(try tx.count(tree) == model.count)
                        // Taken or not a whole value: no put (the lookup alone changed no entry).
                        guard found == nil, prefix == value(n) else { return }
                        let key = prefix + withUnsafeBytes(of: UInt32.random(in: 0...UInt32.max, using: &random).bigEndian, Array.init)
                        let hintsBefore = tx.leafHintInserts
                        try tx.put(key, [UInt8](repeating: 7, count: Int.random(in: 0...60, using: &random)), in: tree)
                        puts += 1
                        if tx.leafHintInserts > hintsBefore { hintedPuts += 1 }
                        model.insert(key, at: position(of: key))
                    }
                    for _ in 0..<Int.random(in: 1...200, using: &random) {
                        if Int.random(in: 0..<50, using: &random) == 0 {
                            let saved = model
                            let keep = Bool.random(using: &random)
                            do {
                                try tx.nested { _ in
                                    for _ in 0..<Int.random(in: 1...20, using: &random) { try step() }
                                    if !keep { throw Abort() }
                                }
                            } catch is Abort {
                                model = saved
                            }
                        } else {
                            try step()
                        }
                    }
                    if Int.random(in: 0..<8, using: &random) == 0 { throw Abort() }
                }
            } catch is Abort {
                model = before
            }
            #expect(try treeKeys(db) == model, "round \(round)")
        }
        db.close()
        db = try Database(path: dir.path, options: options)
        #expect(try treeKeys(db) == model)
        print("[prefixInsertLookupMatchesModel] \(puts) puts, \(hintedPuts) through the hint, \(model.count) keys")
        #expect(hintedPuts * 2 > puts)
    }
}
