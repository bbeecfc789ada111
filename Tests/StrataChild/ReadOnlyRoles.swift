// A reader without write permission (Tests/StrataCoreTests/ReadOnlyReaderTests.swift): drops to
// uid/gid 65534 when running as root, opens the store read-only and answers one line per command.
import Foundation
import StrataCore

/// The stores of the read-only tests hold tree "t" with keys "key 0"... whose values are
/// "value ROUND i": a consistent snapshot has one round in every value. `scan` visits the values.
private func describeRound(generation: UInt64, scan: (_ visit: (ByteView) -> Void) throws -> Void) throws -> String {
    var rounds = Set<String>()
    var count = 0
    try scan { value in
        let words = String(decoding: value.bytes, as: UTF8.self).split(separator: " ")
        rounds.insert(words.count >= 3 && words[0] == "value" ? String(words[1]) : "garbage")
        count += 1
    }
    guard count > 0 else { return "gen=\(generation) round=none count=0" }
    let round = rounds.count == 1 ? rounds.first! : "mixed(\(rounds.sorted().joined(separator: ",")))"
    return "gen=\(generation) round=\(round) count=\(count)"
}

private func describeRound(_ tx: Transaction) throws -> String {
    try describeRound(generation: tx.generation) { visit in
        guard let tree = try tx.treeIfPresent("t") else { return }
        try tx.scan(tree) { _, value in visit(value); return true }
    }
}

private func describeRound(_ snapshot: ReadSnapshot) throws -> String {
    try describeRound(generation: snapshot.generation) { visit in
        try snapshot.scan(inTree: "t") { _, value in visit(value); return true }
    }
}

/// Commands: `read` (a fresh snapshot), `snap` (the same through `withSnapshot`), `hold` (begin one and keep it), `check` (read the held
/// one again), `end`, `wait ROUND` (poll fresh snapshots until that round shows), `churn SECONDS`
/// (fresh snapshots back to back, counting inconsistent ones), `quit`.
/// Every answer is one line; a typed failure is "refused DESCRIPTION", anything else "untyped ...".
func readOnlyReader(path: String) {
    if geteuid() == 0 {
        guard setgid(65534) == 0, setuid(65534) == 0 else { fail("cannot drop privileges: errno \(errno)") }
    }
    func answer(_ body: () throws -> String) {
        do { say(try body()) } catch let error as StrataError { say("refused \(error)") } catch { say("untyped \(error)") }
    }
    var db: Database?
    answer {
        let opened = try Database(path: path, mode: .readOnly)
        db = opened
        return "opened \(opened.generation)"
    }
    guard let db else {
        // Keep answering, so the parent's commands never meet a closed pipe.
        while let line = readLine(), line != "quit" { say("not open") }
        return
    }
    var held: ReadTransaction?
    while let line = readLine() {
        let words = line.split(separator: " ").map(String.init)
        switch words.first ?? "" {
        case "read": answer { "read " + (try db.read { try describeRound($0) }) }
        case "snap": answer { "snap " + (try db.withSnapshot { try describeRound($0) }) }
        case "hold":
            answer {
                let tx = try db.beginRead()
                held = tx
                return "held " + (try describeRound(tx))
            }
        case "check": answer { "check " + (try held.map { try describeRound($0) } ?? "nothing held") }
        case "end":
            held?.end()
            held = nil
            say("ended")
        case "wait":
            answer {
                let deadline = Date().addingTimeInterval(30)
                var last = ""
                while Date() < deadline {
                    last = try db.read { try describeRound($0) }
                    if last.contains("round=\(words[1]) ") { return "seen " + last }
                    usleep(500)
                }
                return "timeout " + last
            }
        case "churn":
            // Fresh snapshots back to back for the given seconds; each must hold one round.
            let deadline = Date().addingTimeInterval(Double(words[1]) ?? 1)
            var reads = 0, mixed = 0, failures = 0, generations = Set<UInt64>()
            var firstFailure = ""
            while Date() < deadline {
                do {
                    let line = try db.read { tx in
                        generations.insert(tx.generation)
                        return try describeRound(tx)
                    }
                    if line.contains("mixed") || line.contains("garbage") { mixed += 1 }
                } catch {
                    failures += 1
                    if firstFailure.isEmpty { firstFailure = "\(error)" }
                }
                reads += 1
            }
            say("churned reads=\(reads) generations=\(generations.count) mixed=\(mixed) failures=\(failures) \(firstFailure)")
        case "quit": return
        default: say("unknown command \(line)")
        }
    }
}
