import Foundation
import Testing
@testable import StrataCore

/// Shapes the random model test rarely reaches: sequential appends (which split leaving a single
/// node on the right, and branches with a single child) followed by deletes that empty those pages.
@Suite struct TreeShapeTests {
    @Test func emptiedSingleChildPagesLeaveTheTree() throws {
        let seed = testSeed("emptiedSingleChildPages")
        var random = SeededGenerator(seed: seed)
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        var model: [String: [UInt8]] = [:]
        for round in 0..<60 {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                // Append a run of ascending keys (large values: few per page, many splits).
                for i in 0..<40 {
                    let key = String(format: "k%08d", round * 1000 + i)
                    let value = [UInt8](repeating: UInt8(i), count: Int.random(in: 200...900, using: &random))
                    try tx.put(key, value, in: t)
                    model[key] = value
                }
                // Delete the newest keys first (emptying the single-node right pages), plus some random ones.
                let newest = model.keys.sorted().suffix(Int.random(in: 0...45, using: &random))
                for key in newest.reversed() where Bool.random(using: &random) || key.hasPrefix(String(format: "k%05d", round)) {
                    #expect(try tx.delete(key, in: t))
                    model[key] = nil
                }
                for key in model.keys.shuffled(using: &random).prefix(Int.random(in: 0...10, using: &random)) {
                    #expect(try tx.delete(key, in: t))
                    model[key] = nil
                }
            }
            let report = try db.check()
            #expect(report.isClean, "round \(round): \(report.problems.prefix(3))")
            if !report.isClean { return }
        }
        try db.read { tx throws in
            var seen: [String: [UInt8]] = [:]
            try tx.scan(tx.tree("t")) { key, value in
                seen[String(decoding: key.bytes, as: UTF8.self)] = value.bytes
                return true
            }
            #expect(seen == model)
        }
    }

    /// A store without syncs (the shape tests commit often and never test durability).
    /// Log keys: long ones keep branch fan-out low, so a few thousand entries make a tree three
    /// or four levels deep, where whole branches merge.
    static func logKey(_ n: Int) -> String { String(format: "%012d", n) + String(repeating: "-", count: 120) }

    /// A log: appended at the right, trimmed from the left (what a datastore's change log does).
    @Test func trimmingFromTheLeftNeverLeavesAnEmptyPage() throws {
        let seed = testSeed("trimmingFromTheLeft")
        var random = SeededGenerator(seed: seed)
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        var next = 0
        var oldest = 0
        let key = Self.logKey
        for round in 0..<40 {
            try db.write { tx in
                let t = try tx.openOrCreateTree("log")
                for _ in 0..<Int.random(in: 100...1500, using: &random) {
                    try tx.put(key(next), [UInt8](repeating: 7, count: Int.random(in: 8...60, using: &random)), in: t)
                    next += 1
                }
                let trim = round < 10 ? 0 : Int.random(in: 0...max(0, next - oldest), using: &random)
                for _ in 0..<trim {
                    #expect(try tx.delete(key(oldest), in: t))
                    oldest += 1
                }
            }
            let report = try db.check()
            #expect(report.isClean, "round \(round): \(report.problems.prefix(3))")
            if !report.isClean { return }
            try db.read { tx throws in #expect(try tx.count(tx.tree("log")) == next - oldest) }
        }
    }

    /// `deleteLeading` removes whole leaves at a time: the same log shape, trimmed in bulk (with
    /// limits and some overflow values), must match a model and leave a clean tree.
    @Test func deleteLeadingMatchesOneByOneDeletes() throws {
        let seed = testSeed("deleteLeading")
        var random = SeededGenerator(seed: seed)
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        var next = 0
        var oldest = 0
        let key = Self.logKey
        func value(_ n: Int) -> [UInt8] { [UInt8](repeating: UInt8(n % 251), count: n % 97 == 0 ? 9000 : 8 + n % 50) }
        for round in 0..<40 {
            try db.write { tx in
                let t = try tx.openOrCreateTree("log")
                for _ in 0..<Int.random(in: 100...1500, using: &random) {
                    try tx.put(key(next), value(next), in: t)
                    next += 1
                }
                guard round >= 5 else { return }
                let target = Int.random(in: oldest...next + 10, using: &random)
                let limit = Bool.random(using: &random) ? Int.max : Int.random(in: 0...2000, using: &random)
                let removed = try tx.deleteLeading(before: String(format: "%012d", target), in: t, limit: limit)
                #expect(removed == min(limit, max(0, min(target, next) - oldest)))
                oldest += removed
                // Nothing below the bound may remain once the limit did not stop the trim.
                #expect(try tx.deleteLeading(before: key(oldest), in: t) == 0)
            }
            let report = try db.check()
            #expect(report.isClean, "round \(round): \(report.problems.prefix(3))")
            if !report.isClean { return }
            try db.read { tx throws in
                #expect(try tx.count(tx.tree("log")) == next - oldest)
                var expected = oldest
                try tx.scan(tx.tree("log")) { k, v in
                    #expect(k.bytes == Array(key(expected).utf8) && v.bytes == value(expected))
                    expected += 1
                    return true
                }
                #expect(expected == next)
            }
        }
        try db.write { tx in
            let t = try tx.tree("log")
            #expect(try tx.deleteLeading(before: [UInt8](repeating: 0xFF, count: 4), in: t) == next - oldest)
            #expect(try tx.count(t) == 0)
        }
        #expect(try db.check().isClean)
    }
}

@Suite struct SpaceReuseTests {
    /// Many tiny commits (the free tree's own pages dominate what each commit touches) must not
    /// grow the file or the free list without bound.
    @Test func tinyCommitsKeepTheFileBounded() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        func commit(_ i: Int) throws {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                try tx.put("counter", String(i), in: t)
                try tx.put("item-\(i)", [UInt8](repeating: UInt8(i % 256), count: 100 + i % 90), in: t)
                try tx.delete("item-\(i - 50)", in: t)
            }
        }
        for i in 0..<300 { try commit(i) }
        let settled = try db.read { $0.pageCount }
        for i in 300..<2300 { try commit(i) }
        let report = try db.check()
        print("[tinyCommits] settled \(settled) pages, after 2,000 more commits \(report.pageCount) pages, \(report.freePages) free, \(report.treePages) in trees")
        #expect(report.isClean, "\(report.problems.prefix(3))")
        #expect(report.pageCount <= settled + 8, "file grew from \(settled) to \(report.pageCount) pages")
        #expect(report.freePages < 64, "\(report.freePages) free pages after 2,000 tiny commits")
    }
}
