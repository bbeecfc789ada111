import Foundation
@_spi(Testing) import StrataCore
import StrataTestFixtures

// MARK: Readers under stress

/// Opens the store and begins and ends read transactions forever; prints "ready" after the first.
func churnReader(path: String) throws {
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
