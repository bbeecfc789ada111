import Foundation
import Testing
@testable import StrataCore

/// Tens of thousands of random operations across several trees, checked against an in-memory model
/// after every transaction, with aborts and reopens along the way.
@Suite struct RandomizedModelTests {
    typealias Model = [String: [[UInt8]: [UInt8]]]

    @Test func treeMatchesModel() throws {
        var (random, dir, options) = modelStore("treeMatchesModel")
        var db = try Database(path: dir.path, options: options)
        var model: Model = [:]
        let treeNames = ["alpha", "beta", "gamma", "delta"]
        var operations = 0

        func randomKey(_ random: inout SeededGenerator) -> [UInt8] {
            // A small key space forces overwrites and deletes of present keys; varied lengths and a
            // shared prefix exercise prefix ordering.
            let n = Int.random(in: 0..<3000, using: &random)
            var key = Array("k\(n)".utf8)
            if n % 7 == 0 { key += [UInt8](repeating: UInt8(n % 251), count: Int.random(in: 0...300, using: &random)) }
            return key
        }
        func randomValue(_ random: inout SeededGenerator) -> [UInt8] {
            let roll = Int.random(in: 0..<100, using: &random)
            let length = roll < 2 ? Int.random(in: 2000...20000, using: &random) : Int.random(in: 0...120, using: &random)
            let fill = UInt8.random(in: 0...255, using: &random)
            return (0..<length).map { UInt8(truncatingIfNeeded: Int(fill) &+ $0) }
        }

        struct Abort: Error {}
        for round in 0..<400 {
            let shouldAbort = Int.random(in: 0..<10, using: &random) == 0
            var pending = model
            do {
                try db.write { tx in
                    for _ in 0..<Int.random(in: 1...150, using: &random) {
                        operations += 1
                        let name = treeNames[Int.random(in: 0..<treeNames.count, using: &random)]
                        let tree = try tx.openOrCreateTree(name)
                        if pending[name] == nil { pending[name] = [:] }
                        switch Int.random(in: 0..<100, using: &random) {
                        case 0..<55:
                            let key = randomKey(&random), value = randomValue(&random)
                            let replaced = try tx.put(key, value, in: tree)
                            #expect(replaced == (pending[name]![key] != nil))
                            pending[name]![key] = value
                        case 55..<90:
                            let key = randomKey(&random)
                            let removed = try tx.delete(key, in: tree)
                            #expect(removed == (pending[name]![key] != nil))
                            pending[name]![key] = nil
                        case 90..<99:
                            let key = randomKey(&random)
                            #expect(try tx.get(key, in: tree)?.bytes == pending[name]![key])
                        default:
                            if Bool.random(using: &random) {
                                try tx.clear(tree)
                                pending[name] = [:]
                            } else {
                                try tx.dropTree(tree)
                                pending[name] = nil
                            }
                        }
                    }
                    if shouldAbort { throw Abort() }
                }
                model = pending
            } catch is Abort {
                // The model keeps the last committed state.
            }
            try verifyRound(round, reopeningEvery: 50, &db, at: dir.path, options: options, against: model, random: &random)
        }
        print("[treeMatchesModel] \(operations) operations, final generation \(db.generation)")
        #expect(operations > 20_000)
    }

    /// The seeded generator (its seed printed), directory and options of a model test's store.
    func modelStore(_ name: String) -> (SeededGenerator, TemporaryDirectory, DatabaseOptions) {
        var options = DatabaseOptions()
        options.durability = .none
        return (SeededGenerator(seed: testSeed(name)), TemporaryDirectory(), options)
    }

    /// Checks `db` against `model`; every `interval` rounds also reopens it and checks again.
    func verifyRound(_ round: Int, reopeningEvery interval: Int, _ db: inout Database, at path: String, options: DatabaseOptions,
                     against model: Model, random: inout SeededGenerator) throws {
        try verify(db, against: model, random: &random)
        guard round % interval == interval - 1 else { return }
        db.close()
        db = try Database(path: path, options: options)
        try verify(db, against: model, random: &random)
    }

    func verify(_ db: Database, against model: Model, random: inout SeededGenerator) throws {
        try db.read { tx throws in
            #expect(try tx.treeNames() == model.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            for (name, entries) in model {
                let tree = try tx.tree(name)
                #expect(try tx.count(tree) == entries.count)
                let sortedKeys = entries.keys.sorted { $0.lexicographicallyPrecedes($1) }
                // Full scan in both directions.
                var scanned: [[UInt8]] = []
                try tx.scan(tree) { key, value in
                    scanned.append(key.bytes)
                    #expect(value.bytes == entries[key.bytes])
                    return true
                }
                #expect(scanned == sortedKeys)
                var reversed: [[UInt8]] = []
                try tx.scan(tree, reverse: true) { key, _ in reversed.append(key.bytes); return true }
                #expect(reversed == sortedKeys.reversed())
                // A random bounded range.
                if !sortedKeys.isEmpty {
                    var a = sortedKeys[Int.random(in: 0..<sortedKeys.count, using: &random)]
                    var b = sortedKeys[Int.random(in: 0..<sortedKeys.count, using: &random)]
                    if b.lexicographicallyPrecedes(a) { swap(&a, &b) }
                    var ranged: [[UInt8]] = []
                    try tx.scan(tree, from: a, to: b) { key, _ in ranged.append(key.bytes); return true }
                    #expect(ranged == sortedKeys.filter { !$0.lexicographicallyPrecedes(a) && $0.lexicographicallyPrecedes(b) })
                }
            }
        }
        let report = try db.check()
        #expect(report.problems.isEmpty, "\(report.problems)")
    }
}
