import Foundation
import Synchronization
@_spi(Testing) import StrataCore
import StrataTestFixtures

// MARK: Readers under stress

/// Opens the store and begins and ends read transactions forever; prints "ready" after the first.
func churnReader(path: String) throws {
    exitWhenParentIsGone()
    let db = try Database(path: path, mode: .readOnly)
    var reads = 0
    while true {
        try db.read { tx in
            if let t = try tx.treeIfPresent("t") { _ = try tx.get("key 1", in: t) }
        }
        reads += 1
        if reads == 1 { say("ready \(getpid())") }
    }
}

/// Holds one snapshot until a line arrives on stdin, then ends it, prints "released" and idles.
func pinUntilTold(path: String) throws {
    let db = try Database(path: path, mode: .readOnly)
    let tx = try db.beginRead()
    say("pinned \(tx.generation)")
    _ = readLine()
    tx.end()
    say("released")
    while true { sleep(1) }
}

/// Exits when the parent is gone (end of stdin), so a reader that loops or holds a snapshot never
/// outlives a crashed test.
func exitWhenParentIsGone() {
    Thread.detachNewThread {
        while readLine() != nil {}
        exit(0)
    }
}

/// Checks the invariant `ReaderStressTests.rewrite` keeps in every commit: tree "t" holds keys
/// "key 0" ... "key 149", and key i holds 120 bytes, each `round + i` for the commit's one round.
/// Returns that round (mod 256); a snapshot that breaks it prints "error inconsistent ..." and
/// exits with status 3 (the parent reports it apart from ordinary errors).
func checkRewriteInvariant(_ snapshot: ReadSnapshot) throws -> UInt8 {
    var round: UInt8?
    var entries = 0
    var problem: String?
    try snapshot.scan(inTree: "t") { key, value in
        entries += 1
        let name = String(decoding: key, as: UTF8.self)
        guard name.hasPrefix("key "), let i = Int(name.dropFirst(4)), value.count == 120 else {
            problem = "entry \(name) of \(value.count) bytes"
            return false
        }
        // The first entry sets the round; every other must be of the same one.
        let first = round ?? (value[0] &- UInt8(truncatingIfNeeded: i))
        round = first
        let expected = first &+ UInt8(truncatingIfNeeded: i)
        guard value.allSatisfy({ $0 == expected }) else {
            problem = "\(name) holds bytes \(Set(value).sorted()), not \(expected) as round \(first) of the entries before it"
            return false
        }
        return true
    }
    if problem == nil && entries != 150 { problem = "\(entries) entries instead of 150" }
    if let problem {
        say("error inconsistent snapshot \(snapshot.generation): \(problem)")
        exit(3)
    }
    return round!
}

/// Reads through `withSnapshot` forever (so its handle keeps one reader slot, idle between
/// snapshots), checking the stress writer's invariant in every snapshot, staying in some for a
/// moment across the writer's commits; prints "ready PID" after the first. With `mode` "hold" it
/// stays, after a few more snapshots, in one for good, re-checking it (the round must not change),
/// after printing "holding GENERATION"; with "idle" it stops between two snapshots after printing
/// "idle". (The mode is an argument, not a message: writing to a child that already exited on an
/// inconsistent snapshot would kill the test with SIGPIPE.)
func snapshotReader(path: String, mode: String) throws {
    let db = try Database(path: path, mode: .readOnly)
    exitWhenParentIsGone()
    var snapshots = 0
    let last = mode == "loop" ? Int.max : Int.random(in: 1...30)
    while true {
        if mode == "idle" && snapshots == last {
            say("idle")
            while true { sleep(1) }
        }
        let holding = mode == "hold" && snapshots == last
        try db.withSnapshot { snapshot in
            let round = try checkRewriteInvariant(snapshot)
            if holding { say("holding \(snapshot.generation)") }
            var rechecks = holding ? Int.max : Int.random(in: -3...3)
            while rechecks > 0 {
                usleep(500)
                let again = try checkRewriteInvariant(snapshot)
                if again != round {
                    say("error inconsistent snapshot \(snapshot.generation): round \(round) became \(again) inside it")
                    exit(3)
                }
                rechecks -= 1
            }
        }
        snapshots += 1
        if snapshots == 1 { say("ready \(getpid())") }
        if Bool.random() { usleep(UInt32.random(in: 0...1000)) }
    }
}
