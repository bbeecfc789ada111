import Foundation
import Testing
@testable import StrataCore

/// The bank-transfer invariant across processes: a writer process moves money between 500 accounts
/// (random transfers, the total constant) while reader processes each read every balance in one
/// snapshot, again and again, and verify the sum. The writer is SIGKILLed and restarted every
/// second or so. Every snapshot any reader takes must sum to the same total.
///
/// `STRATA_SOAK_SECONDS` sets the duration (default 3), `STRATA_SOAK_READERS` the reader processes
/// (default 3).
@Suite(.serialized) struct BankSoakTests {
    @Test func everySnapshotSumsToTheSameTotal() throws {
        let seconds = environmentSeconds("STRATA_SOAK_SECONDS", default: 3)
        let readerCount = environmentCount("STRATA_SOAK_READERS", default: 3)
        let seed = testSeed("bankSoak")
        var random = SeededGenerator(seed: seed)
        let accounts = 500
        let total = Int64(accounts) * 1000
        let dir = TemporaryDirectory()

        func startWriter() throws -> ChildProcess {
            let durability = Int.random(in: 0..<3, using: &random)
            let writer = try ChildProcess(["bank-writer", dir.path, String(accounts), String(random.next()), String(durability)])
            #expect(writer.waitFor("ready", timeout: 30) == "ready", "the writer did not start (seed \(seed))")
            return writer
        }
        var writer = try startWriter()
        let readers = try (0..<readerCount).map { _ in try ChildProcess(["bank-reader", dir.path, String(accounts), String(total)]) }
        for reader in readers { #expect(reader.waitFor("ready", timeout: 30) == "ready") }

        // The test process reads too, from its own handle.
        let db = try Database(path: dir.path, mode: .readOnly)
        var ownChecks = 0
        var writerKills = 0
        let deadline = Date().addingTimeInterval(seconds)
        var nextKill = Date().addingTimeInterval(Double.random(in: 0.5...1.2, using: &random))
        while Date() < deadline {
            let sum = try db.read { tx -> Int64 in
                var sum: Int64 = 0
                try tx.scan(try tx.tree("bank"), reverse: ownChecks % 2 == 1) { _, value in
                    sum += decodeBalance(value) ?? Int64.min / 4
                    return true
                }
                return sum
            }
            #expect(sum == total, "snapshot at generation \(db.generation) sums to \(sum) (seed \(seed))")
            ownChecks += 1
            if Date() >= nextKill {
                // A writer dies mid-transfer; its successor reopens the store and carries on.
                writer.killHard()
                writerKills += 1
                writer = try startWriter()
                nextKill = Date().addingTimeInterval(Double.random(in: 0.5...1.2, using: &random))
            }
            usleep(1000)
        }
        writer.send("stop")
        let writerSummary = writer.waitFor("transfers", timeout: 30) ?? "no summary"
        var readerChecks = 0
        for reader in readers {
            reader.send("stop")
            let summary = reader.waitFor("checks", timeout: 30) ?? "no summary"
            let violations = reader.allLines.filter { $0.hasPrefix("violation") }
            #expect(violations.isEmpty, "reader \(reader.pid): \(violations.prefix(3)) (seed \(seed))")
            let fields = summary.split(separator: " ")
            #expect(fields.count >= 4 && fields[3] == "0", "reader \(reader.pid): \(summary)")
            readerChecks += fields.count >= 2 ? Int(fields[1]) ?? 0 : 0
            reader.waitForExit()
        }
        writer.waitForExit()
        let report = try Database(path: dir.path, mode: .readOnly).check()
        #expect(report.isClean, "\(report.problems.prefix(5))")
        print("[bankSoak] \(String(format: "%.1f", seconds)) s: \(readerChecks + ownChecks) invariant checks (\(readerChecks) by \(readerCount) reader processes, \(ownChecks) in-process), 0 violations; \(writerKills) writer kills; last writer: \(writerSummary); final generation \(db.generation)")
        #expect(readerChecks > 0)
    }
}

/// Mirrors `decodeBalance` in strata-child.
func decodeBalance(_ bytes: ByteView) -> Int64? {
    guard bytes.count == 48 else { return nil }
    return bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
}
