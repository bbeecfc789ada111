import Foundation
@_spi(Testing) import StrataCore
import StrataTestFixtures

// MARK: Fuzz exerciser

/// Reads lines "INDEX STORE" and, for each store, opens it, reads it every way, checks it and writes
/// to it, printing "begin INDEX" first and "done INDEX OUTCOME" after. Any error must be a
/// `StrataError`; a crash or a hang is seen by the parent as a missing "done".
func fuzzExercise(log: String?) {
    // A crash report (the runtime's backtrace) goes to the log, for the parent to quote.
    if let log {
        let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd >= 0 { dup2(fd, STDERR_FILENO); close(fd) }
    }
    while let line = readLine() {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { continue }
        say("begin \(parts[0])")
        say("done \(parts[0]) \(exerciseStore(parts[1]))")
    }
}

/// Everything a user could do with a store; returns a summary of what worked.
func exerciseStore(_ path: String) -> String {
    var outcome: [String] = []
    var untyped: [String] = []
    func attempt(_ label: String, _ body: () throws -> Void) {
        do {
            try body()
            outcome.append("\(label):ok")
        } catch is StrataError {
            outcome.append("\(label):err")
        } catch {
            untyped.append("\(label): \(error)")
        }
    }
    var probes = SeededGenerator(seed: path.utf8.reduce(5381) { ($0 &* 33) &+ UInt64($1) })
    func readAll(_ db: Database) {
        attempt("read") {
            try db.read { tx in
                for name in try tx.treeNames() {
                    let tree = try tx.tree(name)
                    _ = try tx.count(tree)
                    var keys: [[UInt8]] = []
                    var total = 0
                    try tx.scan(tree) { key, value in
                        if keys.count < 64 { keys.append(key.bytes) }
                        total &+= value.count
                        return true
                    }
                    try tx.scan(tree, reverse: true) { _, value in total &+= value.count; return true }
                    for key in keys { _ = try tx.get(key, in: tree) }
                    for i in 0..<40 { _ = try tx.get(String(format: "key %05d", i * 37), in: tree) }
                    let cursor = try tx.cursor(tree)
                    for _ in 0..<20 {
                        let probe = String(format: "key %05d", Int.random(in: 0..<2000, using: &probes))
                        if try cursor.seek(probe) {
                            _ = try cursor.key()
                            _ = try cursor.value()
                            for _ in 0..<3 { guard try cursor.next() else { break } }
                            for _ in 0..<6 { guard try cursor.previous() else { break } }
                        }
                        if try cursor.seekLast(atOrBefore: probe) { _ = try cursor.value() }
                    }
                    if try cursor.last() { while try cursor.previous() { _ = try cursor.value() } }
                    try tx.scan(tree, from: Array("key 00500".utf8), to: Array("key 00900".utf8), reverse: true) { _, _ in true }
                }
            }
        }
    }
    do {
        var options = DatabaseOptions()
        options.durability = .none
        let db = try Database(path: path, options: options)
        outcome.append("open:ok")
        readAll(db)
        attempt("check") { if !(try db.check().isClean) { throw StrataError.corruptPage(page: 0, reason: "check found problems") } }
        attempt("write") {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                for i in 0..<30 { try tx.put(String(format: "key %05d", i * 53), "fuzz \(i)", in: t) }
                for i in 0..<30 { try tx.delete(String(format: "key %05d", i * 41 + 7), in: t) }
                try tx.put("fuzz big", [UInt8](repeating: 7, count: 9000), in: t)
                try tx.put("key 00100", [UInt8](repeating: 9, count: 5000), in: t)
            }
        }
        attempt("drop") {
            try db.write { tx in
                if let u = try tx.treeIfPresent("u") { try tx.dropTree(u) }
                let fresh = try tx.openOrCreateTree("fresh")
                for i in 0..<200 { try tx.put("f \(i)", [UInt8](repeating: UInt8(i % 256), count: i * 3), in: fresh) }
            }
        }
        attempt("clear") {
            try db.write { tx in
                if let t = try tx.treeIfPresent("t") {
                    for i in 0..<400 { try tx.delete(String(format: "key %05d", i), in: t) }
                }
            }
        }
        readAll(db)
        attempt("check2") { if !(try db.check().isClean) { throw StrataError.corruptPage(page: 0, reason: "check found problems") } }
        db.close()
        let reader = try Database(path: path, mode: .readOnly)
        readAll(reader)
    } catch is StrataError {
        outcome.append("open:err")
    } catch {
        untyped.append("open: \(error)")
    }
    if !untyped.isEmpty { return "UNTYPED " + untyped.joined(separator: "; ") }
    return outcome.joined(separator: ",")
}
