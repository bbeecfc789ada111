import Foundation
import Testing
@testable import StrataCore
import StrataTestFixtures

/// A child writer commits continuously and is SIGKILLed at random moments. Every reopen must find a
/// clean store whose content is exactly the state after some commit, never before an acknowledged one.
@Suite(.serialized) struct CrashLoopTests {
    @Test func writerKilledAtRandomMomentsLeavesACommittedPrefix() throws {
        let seed = testSeed("crashLoop")
        var random = SeededGenerator(seed: seed)
        let dir = TemporaryDirectory()
        var kills = 0
        var lastCounter = 0
        for round in 0..<30 {
            let durability = round % 3
            let child = try ChildProcess(["crash-writer", dir.path, String(durability)])
            _ = child.waitFor("committed", timeout: 30)
            usleep(UInt32.random(in: 0...40_000, using: &random))
            child.killHard()
            kills += 1
            let acknowledged = child.allLines.compactMap { $0.hasPrefix("committed ") ? Int($0.dropFirst(10)) : nil }.max() ?? 0

            let db = try Database(path: dir.path, mode: .readOnly)
            let report = try db.check()
            #expect(report.isClean, "round \(round): \(report.problems)")
            try db.read { tx throws in
                let items = try tx.tree("items")
                let counter = Int(try tx.string("counter", in: items) ?? "0")!
                // Process crashes never lose a commit the kernel accepted: at least what was
                // acknowledged, at most one more (killed between commit and acknowledgement).
                #expect(counter >= acknowledged && counter <= acknowledged + 1, "round \(round): counter \(counter), acknowledged \(acknowledged)")
                #expect(counter >= lastCounter)
                lastCounter = counter
                var expected: [String: [UInt8]] = ["counter": Array(String(counter).utf8)]
                for i in max(1, counter - 49)...max(1, counter) where counter > 0 { expected["item-\(i)"] = CrashLoop.item(i) }
                var actual: [String: [UInt8]] = [:]
                try tx.scan(items) { key, value in
                    actual[String(decoding: key.bytes, as: UTF8.self)] = value.bytes
                    return true
                }
                #expect(actual == expected, "round \(round): content is not the state after commit \(counter)")
            }
        }
        print("[crashLoop] \(kills) kills survived, final counter \(lastCounter)")
        #expect(lastCounter > 30)
    }
}

