import Foundation
import Testing
@testable import StrataCore

/// The read-modify-write lookup (`WriteTransaction.valueForReplacing`): random keys in two trees
/// read that way, then mostly replaced or inserted, sometimes left alone (a refused write),
/// deleted, or followed by puts into the other tree first; nested levels that abort or merge in
/// between; overflow values. Every answer is checked against the model as it happens, the trees
/// after every transaction and by `check()` (a copied path the record did not name, or a leaf
/// hint that outlived its leaf, would show as a missing or misplaced key or a damaged page).
extension RandomizedModelTests {
    @Test func replaceLookupsMatchModel() throws {
        var (random, dir, options) = modelStore("replaceLookupsMatchModel")
        var db = try Database(path: dir.path, options: options)
        var model: Model = [:]
        let treeNames = ["primary", "other"]
        var replacements = 0
        var hinted = 0

        func key(_ n: Int) -> [UInt8] { Array(String(format: "id-%05d", n).utf8) }
        func value(_ random: inout SeededGenerator) -> [UInt8] {
            let length = Int.random(in: 0..<100, using: &random) < 3 ? 3000 : Int.random(in: 0...160, using: &random)
            return [UInt8](repeating: UInt8.random(in: 0...255, using: &random), count: length)
        }
        func step(_ tx: WriteTransaction, _ pending: inout Model, _ random: inout SeededGenerator) throws {
            let name = treeNames[Int.random(in: 0..<treeNames.count, using: &random)]
            let tree = try tx.openOrCreateTree(name)
            if pending[name] == nil { pending[name] = [:] }
            let k = key(Int.random(in: 0..<3000, using: &random))
            let old = try tx.valueForReplacing(k, in: tree)?.bytes
            #expect(old == pending[name]![k])
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                // Refused: nothing written after the lookup.
                break
            case 1:
                #expect(try tx.delete(k, in: tree) == (old != nil))
                pending[name]![k] = nil
            case 2:
                // A put into the other tree in between: each tree keeps its own hint.
                let otherName = treeNames.first { $0 != name }!
                let other = try tx.openOrCreateTree(otherName)
                if pending[otherName] == nil { pending[otherName] = [:] }
                let otherKey = key(Int.random(in: 0..<3000, using: &random))
                let otherValue = value(&random)
                try tx.put(otherKey, otherValue, in: other)
                pending[otherName]![otherKey] = otherValue
                fallthrough
            default:
                let v = value(&random)
                let before = tx.leafHintInserts
                #expect(try tx.put(k, v, in: tree) == (old != nil))
                hinted += tx.leafHintInserts - before
                replacements += 1
                pending[name]![k] = v
            }
        }

        struct Abort: Error {}
        for round in 0..<30 {
            var pending = model
            let shouldAbort = Int.random(in: 0..<10, using: &random) == 0
            do {
                try db.write { tx in
                    for _ in 0..<Int.random(in: 1...150, using: &random) {
                        if Int.random(in: 0..<30, using: &random) == 0 {
                            var inner = pending
                            let abortsInner = Bool.random(using: &random)
                            _ = try? tx.nested { sub in
                                for _ in 0..<Int.random(in: 1...20, using: &random) { try step(sub, &inner, &random) }
                                if abortsInner { throw Abort() }
                            }
                            if !abortsInner { pending = inner }
                        } else {
                            try step(tx, &pending, &random)
                        }
                    }
                    if shouldAbort { throw Abort() }
                }
                model = pending
            } catch is Abort {
                // The model keeps the last committed state.
            }
            try verifyRound(round, reopeningEvery: 10, &db, at: dir.path, options: options, against: model, random: &random)
        }
        print("[replaceLookupsMatchModel] \(replacements) puts after a replace lookup, \(hinted) through the leaf hint")
        // The put after the lookup goes to the remembered leaf unless it must split it.
        #expect(hinted > replacements / 2)
    }

    /// The lookup changes no entry and no `lastModified`; an oversize key is absent, as for `get`.
    @Test func replaceLookupAloneChangesNoEntry() throws {
        let (dir, db) = try unsyncedStore()
        _ = dir
        try db.write { tx in
            let tree = try tx.createTree("t")
            for n in 0..<500 { try tx.put(Array("k\(n)".utf8), Array("v\(n)".utf8), in: tree) }
        }
        let before = try db.read { tx in try tx.record(of: try tx.tree("t")) }
        try db.write { tx in
            let tree = try tx.tree("t")
            #expect(try tx.valueForReplacing(Array("k7".utf8), in: tree)?.bytes == Array("v7".utf8))
            #expect(try tx.valueForReplacing(Array("k7x".utf8), in: tree) == nil)
            #expect(try tx.valueForReplacing([UInt8](repeating: 1, count: 100_000), in: tree) == nil)
        }
        let after = try db.read { tx in try tx.record(of: try tx.tree("t")) }
        #expect(after.entries == before.entries)
        #expect(after.lastModified == before.lastModified)
        try db.read { tx in
            let tree = try tx.tree("t")
            for n in 0..<500 { #expect(try tx.get(Array("k\(n)".utf8), in: tree)?.bytes == Array("v\(n)".utf8)) }
        }
        #expect(try db.check().isClean)
    }
}
