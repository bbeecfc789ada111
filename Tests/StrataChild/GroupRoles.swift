// Child role for the group-commit kill test (Tests/StrataCoreTests/GroupCommitTests.swift): 64
// threads of one process write durably through `Database.write` until the test kills the process.
import Foundation
import StrataCore

/// Runs `role` if it is a group-commit role; returns false if it is not.
func runGroupRole(_ role: String, _ arguments: [String]) throws -> Bool {
    guard role == "group-writers" else { return false }
    try groupWriters(path: arguments[1], round: arguments.count > 2 ? arguments[2] : "0")
    return true
}

/// One line, written with one `write(2)` (atomic on a pipe), so threads never interleave lines.
private func sayAtomically(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeMutableBytes { Glibc.write(1, $0.baseAddress, $0.count) }
}

private struct IntendedFailure: Error {}

/// Each thread commits `k-ROUND-THREAD-I` (acknowledged on stdout as `ack KEY` once `write`
/// returned) and, one time in five, a request that writes `x-ROUND-THREAD-I` and then throws: no
/// `x-` key may ever be found in the store.
private func groupWriters(path: String, round: String) throws {
    let db = try Database(path: path)
    try db.write { tx in _ = try tx.openOrCreateTree("g") }
    sayAtomically("ready")
    let threads = 64
    for thread in 0..<threads {
        let worker = Thread {
            var i = 0
            while true {
                i += 1
                let fails = (thread &* 7919 &+ i &* 104_729) % 5 == 0
                let key = "\(fails ? "x" : "k")-\(round)-\(thread)-\(i)"
                do {
                    try db.write { tx in
                        try tx.put(key, key, in: try tx.tree("g"))
                        if fails { throw IntendedFailure() }
                    }
                    sayAtomically("ack \(key)")
                } catch is IntendedFailure {
                    continue
                } catch {
                    sayAtomically("error \(error)")
                    exit(3)
                }
            }
        }
        worker.stackSize = 1 << 20
        worker.start()
    }
    while true { sleep(1) }
}
