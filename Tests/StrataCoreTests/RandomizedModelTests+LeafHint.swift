import Foundation
import Testing
@testable import StrataCore

/// The leaf-hint insert (`LeafHint`): runs of keys in order, in reverse order, clustered around a
/// point and at random, with replacements, overflow values, deletes and nested levels that abort
/// or merge in between, checked against the model after every transaction and by `check()`.
/// A key put into a leaf that does not cover it would break the scans' order or the checker's
/// separator bounds.
extension RandomizedModelTests {
    @Test func leafHintRunsMatchModel() throws {
        var (random, dir, options) = modelStore("leafHintRunsMatchModel")
        var db = try Database(path: dir.path, options: options)
        var model: Model = [:]
        let treeNames = ["ordered", "mixed"]
        var hinted = 0
        var puts = 0

        func key(_ n: Int, _ random: inout SeededGenerator) -> [UInt8] {
            // Zero-padded: numeric order is key order. Some keys carry a tail, so leaves hold
            // varied sizes and keys that are prefixes of others.
            var key = Array(String(format: "k%07d", n).utf8)
            if n % 11 == 0 { key += [UInt8](repeating: UInt8(n % 251), count: Int.random(in: 0...200, using: &random)) }
            return key
        }
        func value(_ random: inout SeededGenerator) -> [UInt8] {
            let roll = Int.random(in: 0..<100, using: &random)
            let length = roll < 2 ? Int.random(in: 2000...9000, using: &random) : Int.random(in: 0...150, using: &random)
            let fill = UInt8.random(in: 0...255, using: &random)
            return (0..<length).map { UInt8(truncatingIfNeeded: Int(fill) &+ $0) }
        }
        /// One run of key numbers in the given shape.
        func run(_ random: inout SeededGenerator) -> [Int] {
            let length = Int.random(in: 1...400, using: &random)
            let start = Int.random(in: 0..<8_000, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return Array(start..<start + length)
            case 1: return Array((start..<start + length).reversed())
            case 2: return (0..<length).map { _ in start + Int.random(in: -40...40, using: &random) }.map { max(0, $0) }
            default: return (0..<length).map { _ in Int.random(in: 0..<8_000, using: &random) }
            }
        }
        /// Applies one run to `tree` and to `pending`; sometimes deletes a key in between.
        func apply(_ numbers: [Int], to tree: Tree, named name: String, in tx: WriteTransaction,
                   pending: inout Model, random: inout SeededGenerator) throws {
            for n in numbers {
                let k = key(n, &random)
                if Int.random(in: 0..<40, using: &random) == 0 {
                    let removed = try tx.delete(k, in: tree)
                    #expect(removed == (pending[name]![k] != nil))
                    pending[name]![k] = nil
                    continue
                }
                let v = value(&random)
                let replaced = try tx.put(k, v, in: tree)
                #expect(replaced == (pending[name]![k] != nil))
                pending[name]![k] = v
                puts += 1
                if Int.random(in: 0..<50, using: &random) == 0 {
                    #expect(try tx.get(k, in: tree)?.bytes == v)
                }
            }
        }

        struct Abort: Error {}
        for round in 0..<60 {
            var pending = model
            let shouldAbort = Int.random(in: 0..<12, using: &random) == 0
            do {
                try db.write { tx in
                    for _ in 0..<Int.random(in: 1...4, using: &random) {
                        let name = treeNames[Int.random(in: 0..<treeNames.count, using: &random)]
                        let tree = try tx.openOrCreateTree(name)
                        if pending[name] == nil { pending[name] = [:] }
                        let numbers = run(&random)
                        if Int.random(in: 0..<4, using: &random) == 0 {
                            // A nested level: its puts go through hints of its own level, and an
                            // abort must leave the enclosing level's leaves untouched.
                            var inner = pending
                            let abortsInner = Bool.random(using: &random)
                            _ = try? tx.nested { sub in
                                try apply(numbers, to: tree, named: name, in: sub, pending: &inner, random: &random)
                                if abortsInner { throw Abort() }
                            }
                            if !abortsInner { pending = inner }
                            // The enclosing level goes on after the nested one ended.
                            try apply(run(&random), to: tree, named: name, in: tx, pending: &pending, random: &random)
                        } else {
                            try apply(numbers, to: tree, named: name, in: tx, pending: &pending, random: &random)
                        }
                    }
                    hinted += tx.leafHintInserts
                    if shouldAbort { throw Abort() }
                }
                model = pending
            } catch is Abort {
                // The model keeps the last committed state.
            }
            try verifyRound(round, reopeningEvery: 20, &db, at: dir.path, options: options, against: model, random: &random)
        }
        print("[leafHintRunsMatchModel] \(puts) puts, \(hinted) through the leaf hint")
        // Runs in order, reverse or clustered mostly go through the hint.
        #expect(hinted > puts / 4)
    }
}

/// One leaf hint per tree (`LeafHints`): puts that alternate between trees, as a typed write's
/// puts into a primary tree, index trees and a change log do, each go through their own tree's
/// hint. Point reads (`get`, `withFirstKey`) between them are checked against the model as they
/// happen. Deletes (which forget their tree's hint only), splits, overflow values,
/// cleared trees and nested levels come in between; the trees are checked against the model
/// after every transaction and by `check()`. A hint used for the wrong tree, or one that outlived
/// a change to its tree, puts a key into a leaf that does not cover it (breaking the scans' order
/// or the checker's separator bounds) or answers a read wrongly.
extension RandomizedModelTests {
    @Test func interleavedTreesUseTheirOwnLeafHints() throws {
        var (random, dir, options) = modelStore("interleavedTreesUseTheirOwnLeafHints")
        var db = try Database(path: dir.path, options: options)
        var model: Model = [:]
        let treeNames = ["primary", "index", "log", "other"]
        var hinted = 0
        var puts = 0
        // The next key number of each tree: each tree gets keys in order (log-like) or clustered.
        var next = [Int](repeating: 0, count: treeNames.count)

        func key(_ n: Int) -> [UInt8] { Array(String(format: "k%07d", n).utf8) }
        func value(_ random: inout SeededGenerator) -> [UInt8] {
            let length = Int.random(in: 0..<100, using: &random) < 2 ? 3000 : Int.random(in: 0...120, using: &random)
            return [UInt8](repeating: UInt8.random(in: 0...255, using: &random), count: length)
        }
        func step(_ tx: WriteTransaction, _ pending: inout Model, _ random: inout SeededGenerator) throws {
            let which = Int.random(in: 0..<treeNames.count, using: &random)
            let name = treeNames[which]
            let tree = try tx.openOrCreateTree(name)
            if pending[name] == nil { pending[name] = [:] }
            // A point read near the latest keys, present or not, between the puts.
            let probe = key(max(0, next[which] - Int.random(in: -2...20, using: &random)))
            #expect(try tx.get(probe, in: tree)?.bytes == pending[name]![probe])
            let firstAtOrAfter = pending[name]!.keys.filter { !$0.lexicographicallyPrecedes(probe) }.min { $0.lexicographicallyPrecedes($1) }
            #expect(try tx.withFirstKey(atOrAfter: probe, in: tree) { $0.map(Array.init) } == firstAtOrAfter)
            switch Int.random(in: 0..<200, using: &random) {
            case 0:
                try tx.clear(tree)
                pending[name] = [:]
            case 1..<8:
                let k = key(max(0, next[which] - Int.random(in: 0...30, using: &random)))
                #expect(try tx.delete(k, in: tree) == (pending[name]![k] != nil))
                pending[name]![k] = nil
            default:
                // Mostly the next key in order, sometimes one a little behind (a replacement
                // or a key between existing ones).
                let n = Bool.random(using: &random) || next[which] < 10 ? next[which] : next[which] - Int.random(in: 1...10, using: &random)
                next[which] = max(next[which], n + 1)
                let k = key(n), v = value(&random)
                #expect(try tx.put(k, v, in: tree) == (pending[name]![k] != nil))
                pending[name]![k] = v
                puts += 1
            }
        }

        struct Abort: Error {}
        for round in 0..<40 {
            var pending = model
            let shouldAbort = Int.random(in: 0..<10, using: &random) == 0
            do {
                try db.write { tx in
                    for _ in 0..<Int.random(in: 50...600, using: &random) {
                        if Int.random(in: 0..<150, using: &random) == 0 {
                            var inner = pending
                            let abortsInner = Bool.random(using: &random)
                            _ = try? tx.nested { sub in
                                for _ in 0..<Int.random(in: 1...100, using: &random) { try step(sub, &inner, &random) }
                                if abortsInner { throw Abort() }
                            }
                            if !abortsInner { pending = inner }
                        }
                        try step(tx, &pending, &random)
                    }
                    hinted += tx.leafHintInserts
                    if shouldAbort { throw Abort() }
                }
                model = pending
            } catch is Abort {
                // The model keeps the last committed state.
            }
            try verifyRound(round, reopeningEvery: 10, &db, at: dir.path, options: options, against: model, random: &random)
        }
        print("[interleavedTreesUseTheirOwnLeafHints] \(puts) puts, \(hinted) through the leaf hint")
        // With one hint per transaction, puts alternating between trees would almost never hit.
        #expect(hinted > puts / 2)
    }
}
