import Foundation
import Testing
@testable import StrataCore

/// A writer process is SIGKILLed again and again, mostly at a chosen step *inside* commit (through a
/// data-file wrapper in `strata-child kill-writer`), sometimes at a random moment. After every kill
/// the store must reopen with a clean check and hold exactly the state after the last acknowledged
/// commit, or after the commit that was in flight if its meta had already reached the file. A process
/// crash loses nothing the kernel accepted, so this holds for every durability mode.
///
/// `STRATA_CAMPAIGN_KILLS` sets the number of kills (default 40).
@Suite(.serialized) struct CrashCampaignTests {
    /// `strata-child`'s durability argument: 1 was `noMetaSync`, which is now `full`.
    static let durabilityNames = ["full", "full (noMetaSync)", "none"]

    /// The steps of a commit that exist in a durability mode (see `Database.persist`): one sync
    /// after the meta ("meta-sync"); "pages-sync" only in a commit larger than a meta can name.
    static func steps(durability: Int) -> [String] {
        durability == 2 ? ["setsize", "pages", "meta"] : ["setsize", "pages", "pages-sync", "meta", "meta-sync"]
    }

    @Test func killsInsideCommitNeverLoseAnAcknowledgedCommit() throws {
        let kills = environmentCount("STRATA_CAMPAIGN_KILLS", default: 40)
        let seed = testSeed("crashCampaign")
        var random = SeededGenerator(seed: seed)
        let dir = TemporaryDirectory()
        let started = Date()
        var lastCounter = 0
        var tally: [String: Int] = [:]
        for round in 0..<kills {
            let durability = Int.random(in: 0..<3, using: &random)
            let context = "round \(round) (seed \(seed))"
            if round % 5 == 4 {
                // A kill at a random moment, wherever the writer happens to be.
                let child = try ChildProcess(["crash-writer", dir.path, String(durability)])
                _ = child.waitFor("committed", timeout: 30)
                usleep(UInt32.random(in: 0...30_000, using: &random))
                child.killHard()
                let acknowledged = acknowledgedCounter(child) ?? lastCounter
                let counter = try verifyCrashLoopStore(dir.path, context: context)
                #expect(counter >= acknowledged && counter <= acknowledged + 1, "\(context): counter \(counter), acknowledged \(acknowledged)")
                #expect(counter >= lastCounter, "\(context): went back from \(lastCounter) to \(counter)")
                lastCounter = counter
                tally["random-time", default: 0] += 1
                continue
            }
            let steps = CrashCampaignTests.steps(durability: durability)
            let step = steps[Int.random(in: 0..<steps.count, using: &random)]
            let isWrite = step == "pages" || step == "meta"
            let phases = isWrite ? ["before", "mid", "after"] : ["before", "after"]
            let phase = phases[Int.random(in: 0..<phases.count, using: &random)]
            // The file only grows now and then: the resize step runs on a fresh store whose writer
            // adds ballast (100 KB a commit, in a tree the content check ignores), so that the
            // first, second or third resize comes within a few commits. Only commits of more than
            // 2 MiB sync their pages separately: that step's store gets 3 MB of ballast a commit.
            let isResize = step == "setsize"
            let isHuge = step == "pages-sync"
            let freshStore = isResize || isHuge ? TemporaryDirectory() : nil
            let store = freshStore?.path ?? dir.path
            let target = freshStore != nil ? Int.random(in: 1...3, using: &random) : Int.random(in: 1...8, using: &random)
            let ballast = isResize ? ["grow"] : isHuge ? ["huge"] : []
            let child = try ChildProcess(["kill-writer", store, String(durability), step, phase, String(target)] + ballast)
            let killLine = child.waitFor("kill", timeout: 60)
            child.waitForExit(timeout: 30)
            #expect(killLine == "kill \(step) \(phase) \(target)", "\(context): child said \(String(describing: killLine)), lines \(child.allLines.suffix(3))")
            #expect(child.process.terminationReason == .uncaughtSignal && child.process.terminationStatus == SIGKILL, "\(context)")
            let startLine = child.allLines.first { $0.hasPrefix("start ") }
            let start = startLine.flatMap { Int($0.dropFirst(6)) } ?? (freshStore != nil ? 0 : lastCounter)
            let acknowledged = acknowledgedCounter(child) ?? start
            // Once the new meta is in the file (even unsynced), the kernel keeps it and its pages:
            // they verify, and the commit in flight is the one the store reopens at. Before that
            // (or with half a meta), the previous one.
            let metaLanded = step == "meta-sync" || (step == "meta" && phase == "after")
            let expected = metaLanded ? acknowledged + 1 : acknowledged
            let counter = try verifyCrashLoopStore(store, context: context)
            #expect(counter == expected,
                    "\(context): killed at \(step) \(phase) #\(target) (\(CrashCampaignTests.durabilityNames[durability])): counter \(counter), expected \(expected)")
            if freshStore == nil { lastCounter = counter }
            tally["\(step) \(phase)", default: 0] += 1
        }
        let seconds = Date().timeIntervalSince(started)
        let breakdown = tally.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        print("[crashCampaign] \(kills) kills survived in \(String(format: "%.1f", seconds)) s, final counter \(lastCounter); \(breakdown)")
        #expect(lastCounter > kills / 2)
    }
}
