import Foundation
import Testing
@testable import StrataCore

/// Small commits in a steady state (one random replacement plus one log append each, the shape
/// of a typed update) reuse freed pages instead of growing the file: the pages every commit
/// copies come from the free list, including those the free list's own save needs.
@Suite struct FreeListSteadyStateTests {
    @Test func smallCommitsStopGrowingTheFile() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.durability = .none
        let db = try Database(path: dir.path, options: options)
        var random = SeededGenerator(seed: testSeed("smallCommitsStopGrowingTheFile"))
        func key(_ n: Int) -> [UInt8] { Array(String(format: "key-%06d", n).utf8) }
        try db.write { tx in
            let table = try tx.openOrCreateTree("table")
            for n in 0..<5_000 { try tx.put(key(n), [UInt8](repeating: UInt8(n % 256), count: 90), in: table) }
        }
        var logNext: UInt64 = 0
        func commits(_ count: Int) throws {
            for _ in 0..<count {
                try db.write { tx in
                    let table = try tx.openOrCreateTree("table")
                    let log = try tx.openOrCreateTree("log")
                    let n = Int.random(in: 0..<5_000, using: &random)
                    try tx.put(key(n), [UInt8](repeating: UInt8.random(in: 0...255, using: &random), count: 90), in: table)
                    try tx.put(withUnsafeBytes(of: logNext.bigEndian) { Array($0) }, key(n), in: log)
                    logNext += 1
                    // Trim the log's old end now and then, as change logs do.
                    if logNext % 64 == 0, logNext > 512 {
                        try tx.deleteLeading(before: withUnsafeBytes(of: (logNext - 512).bigEndian) { Array($0) }, in: log)
                    }
                }
            }
        }
        try commits(1_000)
        let settled = try db.read { $0.pageCount }
        try commits(2_000)
        let after = try db.read { $0.pageCount }
        print("[smallCommitsStopGrowingTheFile] \(settled) pages after 1000 small commits, \(after) after 3000")
        #expect(after <= settled + 16)
        #expect(try db.check().problems.isEmpty)
    }
}
