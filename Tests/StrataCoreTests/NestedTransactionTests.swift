import Foundation
import Testing
@testable import StrataCore

/// Nested transactions against a stack of in-memory models: random operations at random depths,
/// random rollbacks (a throwing body or `abort()` inside it), the transaction's view checked after
/// every step, the store checked (no lost or doubly used page) after every commit.
@Suite struct NestedTransactionTests {
    typealias Model = RandomizedModelTests.Model

    private struct Rollback: Error {}

    private final class Run {
        var random: SeededGenerator
        var operations = 0
        var nestedCommits = 0
        var nestedRollbacks = 0
        var deepest = 0
        init(seed: UInt64) { random = SeededGenerator(seed: seed) }

        func int(_ range: Range<Int>) -> Int { Int.random(in: range, using: &random) }

        func key() -> [UInt8] {
            let n = int(0..<800)
            var key = Array("k\(n)".utf8)
            if n % 7 == 0 { key += [UInt8](repeating: UInt8(n % 251), count: int(0..<300)) }
            return key
        }

        func value() -> [UInt8] {
            let length = int(0..<100) < 3 ? int(2000..<12000) : int(0..<120)
            let fill = UInt8(truncatingIfNeeded: int(0..<256))
            return (0..<length).map { UInt8(truncatingIfNeeded: Int(fill) &+ $0) }
        }
    }

    private static let treeNames = ["alpha", "beta", "gamma"]

    @Test func nestedRollbacksMatchModel() throws {
        let seed = testSeed("nestedRollbacksMatchModel")
        let run = Run(seed: seed)
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        var model: Model = [:]
        for _ in 0..<120 {
            var pending = model
            let rollBackAll = run.int(0..<8) == 0
            do {
                try db.write { tx in
                    try runLevel(tx, depth: 0, model: &pending, run: run)
                    if rollBackAll { throw Rollback() }
                }
                model = pending
            } catch is Rollback {}
            var random = run.random
            try RandomizedModelTests().verify(db, against: model, random: &random)
            run.random = random
        }
        print("[nestedRollbacksMatchModel] \(run.operations) operations, \(run.nestedCommits) nested commits, \(run.nestedRollbacks) rollbacks, depth \(run.deepest)")
        #expect(run.nestedRollbacks > 100)
        #expect(run.deepest >= 4)
    }

    /// Random operations at one level; may open deeper levels, and roll this one back.
    private func runLevel(_ tx: WriteTransaction, depth: Int, model: inout Model, run: Run) throws {
        run.deepest = max(run.deepest, depth)
        for _ in 0..<run.int(1..<(depth == 0 ? 60 : 25)) {
            let roll = run.int(0..<100)
            if roll < 10 && depth < 7 {
                var inner = model
                let how = run.int(0..<4) // 0: throw, 1: abort(), else keep
                do {
                    try tx.nested { sub in
                        try runLevel(sub, depth: depth + 1, model: &inner, run: run)
                        if how == 0 { throw Rollback() }
                        if how == 1 {
                            sub.abort()
                            #expect(throws: StrataError.self) { try sub.treeNames() }
                        }
                    }
                    if how == 1 { run.nestedRollbacks += 1 } else { model = inner; run.nestedCommits += 1 }
                } catch is Rollback {
                    run.nestedRollbacks += 1
                }
                try verifyInTransaction(tx, model: model, full: true)
                continue
            }
            run.operations += 1
            let name = NestedTransactionTests.treeNames[run.int(0..<NestedTransactionTests.treeNames.count)]
            let tree = try tx.openOrCreateTree(name)
            if model[name] == nil { model[name] = [:] }
            switch roll {
            case 10..<60:
                let key = run.key(), value = run.value()
                #expect(try tx.put(key, value, in: tree) == (model[name]![key] != nil))
                model[name]![key] = value
            case 60..<70:
                // A refused insert changes nothing.
                let key = run.key()
                if model[name]![key] != nil {
                    #expect(throws: StrataError.self) { try tx.put(key, [1, 2, 3], in: tree, mode: .insert) }
                } else {
                    try tx.put(key, [1, 2, 3], in: tree, mode: .insert)
                    model[name]![key] = [1, 2, 3]
                }
            case 70..<95:
                let key = run.key()
                #expect(try tx.delete(key, in: tree) == (model[name]![key] != nil))
                model[name]![key] = nil
            case 95..<98:
                try tx.clear(tree)
                model[name] = [:]
            default:
                try tx.dropTree(tree)
                model[name] = nil
            }
            try verifyInTransaction(tx, model: model, full: false)
        }
    }

    /// The transaction's own view: tree names and sizes always; every entry when `full`.
    private func verifyInTransaction(_ tx: WriteTransaction, model: Model, full: Bool) throws {
        #expect(try tx.treeNames() == model.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        for (name, entries) in model {
            let tree = try tx.tree(name)
            #expect(try tx.count(tree) == entries.count)
            guard full else { continue }
            var seen = 0
            try tx.scan(tree) { key, value in
                seen += 1
                #expect(value.bytes == entries[key.bytes])
                return true
            }
            #expect(seen == entries.count)
        }
    }

    @Test func nestedBodyCannotCommitAndHandlesStayValid() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let outer = try tx.openOrCreateTree("outer")
            try tx.put("a", "1", in: outer)
            var created: Tree?
            do {
                try tx.nested { sub in
                    created = try sub.createTree("inner")
                    try sub.put("b", "2", in: outer)
                    #expect(throws: StrataError.self) { try sub.commit() }
                    throw Rollback()
                }
            } catch is Rollback {}
            // The tree created by the rolled-back level is gone and its handle refused.
            #expect(try tx.treeIfPresent("inner") == nil)
            #expect(throws: StrataError.self) { try tx.count(created!) }
            #expect(try tx.get("b", in: outer) == nil)
            #expect(try tx.get("a", in: outer)?.bytes == Array("1".utf8))
            try tx.nested { sub in try sub.put("c", "3", in: outer) }
        }
        try db.read { tx in
            let outer = try tx.tree("outer")
            #expect(try tx.count(outer) == 2)
            #expect(try tx.get("c", in: outer)?.bytes == Array("3".utf8))
        }
        #expect(try db.check().problems.isEmpty)
    }
}
