import StrataCore

/// The crash-loop workload that the crash tests kill writers in (strata-child's `crash-writer` and
/// `kill-writer` roles) and check afterwards: commit `i` sets `counter = i` in tree "items", adds
/// item `i` and deletes item `i - 50`, so after commit `n` the tree holds exactly the counter and
/// items (n-49)...n. One definition for the children that write it and the tests that check it.
public enum CrashLoop {
    /// The value of item `i` (some items are large enough to need overflow pages).
    public static func item(_ i: Int) -> [UInt8] {
        let length = i % 13 == 0 ? 6000 + i % 1000 : 40 + i % 90
        return (0..<length).map { UInt8(truncatingIfNeeded: i &* 31 &+ $0) }
    }

    /// The next commit's number: one past the stored counter (1 for a new store).
    public static func nextCommit(in db: Database) throws -> Int {
        try db.read { tx -> Int in
            guard let t = try tx.treeIfPresent("items"), let counter = try tx.get("counter", in: t) else { return 1 }
            return Int(String(decoding: counter.bytes, as: UTF8.self))! + 1
        }
    }

    /// Commits number `i`, with `ballast` bytes added to the tree "ballast" when asked (to grow
    /// the file or to exceed what a meta names).
    public static func commit(_ i: Int, to db: Database, ballast: Int = 0) throws {
        try db.write { tx in
            let t = try tx.openOrCreateTree("items")
            try tx.put("counter", String(i), in: t)
            try tx.put("item-\(i)", item(i), in: t)
            try tx.delete("item-\(i - 50)", in: t)
            if ballast > 0 {
                try tx.put("ballast-\(i)", [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: ballast), in: try tx.openOrCreateTree("ballast"))
            }
        }
    }
}
