import Foundation
import Synchronization
import Testing
@testable import StrataCore

/// Hostile data files: valid stores mutated by `FuzzMutator` (bit flips, truncations, swapped and
/// copied pages, forged headers, node offsets, lengths, counts and child pointers, cycles, forged
/// metas, catalog records, free lists and overflow runs). A `strata-child fuzz-exercise` process
/// opens each one, reads it every way (get, scan and cursors in both directions), checks it and
/// writes to it. Every failure must be a `StrataError`; a crash, a hang or any other error fails
/// the test with the recipe that reproduces it (paste it into Corpus/FuzzCorpus.swift).
///
/// `STRATA_FUZZ_INPUTS` sets the number of random inputs (default 300).
@Suite(.serialized) struct FuzzTests {
    static let templates = Mutex<[FuzzBase: FuzzTemplate]>([:])

    static func template(_ base: FuzzBase) throws -> FuzzTemplate {
        if let cached = templates.withLock({ $0[base] }) { return cached }
        let built = try FuzzTemplate.build(base)
        templates.withLock { $0[base] = built }
        return built
    }

    struct Tally {
        var inputs = 0
        var outcomes: [String: Int] = [:]
        var failures: [String] = []
    }

    /// Runs recipes through exerciser processes, restarting one after a crash or hang.
    static func run(_ recipes: [FuzzRecipe], label: String, timeout: Double = 30) throws -> Tally {
        var tally = Tally()
        let root = TemporaryDirectory("fuzz")
        try FileManager.default.createDirectory(atPath: root.parent + "/inputs", withIntermediateDirectories: true)
        var child: ChildProcess?
        for (index, recipe) in recipes.enumerated() {
            let (bytes, applied) = FuzzMutator.mutate(try template(recipe.base), seed: recipe.seed)
            let path = root.parent + "/inputs/\(index).strata"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: path + "/data"))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let log = root.parent + "/exerciser.log"
            if child == nil { child = try ChildProcess(["fuzz-exercise", root.parent, log]) }
            guard let exerciser = child else { continue }
            exerciser.send("\(index) \(path)")
            tally.inputs += 1
            var done: String?
            let deadline = Date().addingTimeInterval(timeout)
            while done == nil && Date() < deadline && FuzzTests.isAlive(exerciser) {
                if let line = exerciser.nextLine(timeout: 0.5), line.hasPrefix("done \(index) ") { done = line }
            }
            if done == nil, let line = exerciser.nextLine(timeout: 1), line.hasPrefix("done \(index) ") { done = line }
            guard let done else {
                let what: String
                if FuzzTests.isAlive(exerciser) {
                    what = "hang (no answer in \(Int(timeout)) s)"
                    kill(exerciser.pid, SIGKILL)
                    _ = FuzzTests.exitStatus(exerciser)
                } else {
                    what = "crash (\(FuzzTests.exitStatus(exerciser))) \(FuzzTests.crashSite(log: log))"
                }
                tally.failures.append("\(label): \(what) on \(recipe) [\(applied.joined(separator: "; "))]")
                FuzzTests.keep(input: path, log: log, name: "\(label)-\(index)")
                child = nil
                continue
            }
            let outcome = String(done.dropFirst("done \(index) ".count))
            if outcome.hasPrefix("UNTYPED") {
                tally.failures.append("\(label): \(outcome) on \(recipe) [\(applied.joined(separator: "; "))]")
            }
            // Summarize: did it open, was damage seen by check, did writes go through.
            let summary = outcome.hasPrefix("UNTYPED") ? "untyped error"
                : !outcome.contains("open:ok") ? "refused at open"
                : outcome.contains("check:err") ? "opened, damage reported"
                : "opened, checks clean"
            tally.outcomes[summary, default: 0] += 1
        }
        if let child {
            kill(child.pid, SIGKILL)
            _ = FuzzTests.exitStatus(child)
        }
        return tally
    }

    // Liveness and exit status from the kernel, not from Foundation's `Process`: under
    // AddressSanitizer it never learns that a child exited (its SIGCHLD source stays silent), so
    // `isRunning` stays true and `waitUntilExit()` blocks forever.

    /// False once the child is gone or a zombie.
    static func isAlive(_ child: ChildProcess) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(child.pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(close, offsetBy: 2)] != "Z"
    }

    /// Waits for a dead or dying child and describes how it ended: from Foundation if it notices
    /// within half a second, else reaping the child here.
    static func exitStatus(_ child: ChildProcess) -> String {
        let started = Date()
        while Date().timeIntervalSince(started) < 10 {
            if !child.process.isRunning {
                let reason = child.process.terminationReason == .uncaughtSignal ? "signal" : "exit"
                return "\(reason) \(child.process.terminationStatus)"
            }
            var status: Int32 = 0
            if Date().timeIntervalSince(started) > 0.5, waitpid(child.pid, &status, WNOHANG) == child.pid {
                // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import.
                let signal = status & 0x7F
                return signal != 0 && signal != 0x7F ? "signal \(signal)" : "exit \((status >> 8) & 0xFF)"
            }
            usleep(2000)
        }
        return "unknown"
    }

    /// With STRATA_FUZZ_KEEP=DIR, a crashing input and the crash report are copied to DIR/NAME.
    static func keep(input: String, log: String, name: String) {
        guard let directory = ProcessInfo.processInfo.environment["STRATA_FUZZ_KEEP"] else { return }
        let target = directory + "/" + name
        try? FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: input + "/data", toPath: target + "/data")
        try? FileManager.default.copyItem(atPath: log, toPath: target + "/crash.log")
    }

    /// The runtime's reason and the innermost engine frame from a crash report.
    static func crashSite(log: String) -> String {
        guard let text = try? String(contentsOfFile: log, encoding: .utf8) else { return "" }
        let lines = text.split(separator: "\n")
        let reason = lines.first { $0.contains("ERROR: AddressSanitizer") } ?? lines.first {
            $0.contains("Fatal error") || $0.contains("runtime failure") || $0.contains("Program crashed")
        }
        var location = ""
        if let frame = lines.first(where: { $0.contains("/Sources/StrataCore/") }),
           let file = frame.range(of: "/Sources/StrataCore/") {
            // "  1   0x... Function(...) + 123 in strata-child at /path/Sources/StrataCore/File.swift:85:28"
            // Swift backtracer: "  1  0x… Function(…) + 123 in strata-child at /…/Sources/StrataCore/File.swift:85:28";
            // AddressSanitizer: "    #3 0x… in $s10StrataCore…(mangled) /…/Sources/StrataCore/File.swift:95:9".
            let function = frame.contains(" + ") ? frame.split(separator: " ").dropFirst(2).prefix { $0 != "+" }.joined(separator: " ") : ""
            location = "\(function) at Sources/StrataCore/\(frame[file.upperBound...])"
        }
        return "[\(reason.map(String.init)?.trimmingCharacters(in: CharacterSet(charactersIn: "* ")) ?? "no reason")] \(location)"
    }

    static func report(_ tally: Tally, label: String) {
        let outcomes = tally.outcomes.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        print("[\(label)] \(tally.inputs) hostile inputs: \(outcomes); \(tally.failures.count) crash/hang/untyped")
        for failure in tally.failures { print("[\(label)] FAILURE \(failure)") }
    }

    @Test func corpusReplays() throws {
        let tally = try FuzzTests.run(fuzzRegressionCorpus.map(\.recipe), label: "fuzzCorpus")
        FuzzTests.report(tally, label: "fuzzCorpus")
        #expect(tally.failures.isEmpty, "\(tally.failures)")
    }

    @Test func mutatedStoresNeverCrashOrHang() throws {
        let count = environmentCount("STRATA_FUZZ_INPUTS", default: 300)
        let seed = testSeed("fuzz")
        var random = SeededGenerator(seed: seed)
        let recipes = (0..<count).map { index in
            FuzzRecipe(base: index % 4 == 3 ? .small : .multi, seed: random.next())
        }
        let started = Date()
        let tally = try FuzzTests.run(recipes, label: "fuzz")
        FuzzTests.report(tally, label: "fuzz")
        print("[fuzz] \(String(format: "%.1f", Date().timeIntervalSince(started))) s")
        #expect(tally.failures.isEmpty, "\(tally.failures.prefix(10))")
    }

    /// The mutations are deterministic: a recipe is a complete, replayable description of an input.
    @Test func recipesAreDeterministic() throws {
        let template = try FuzzTests.template(.multi)
        for seed in [1, 2, 3, 99, 12345] as [UInt64] {
            let first = FuzzMutator.mutate(template, seed: seed)
            let second = FuzzMutator.mutate(template, seed: seed)
            #expect(first.bytes == second.bytes && first.applied == second.applied)
        }
        let rebuilt = try FuzzTemplate.build(.multi)
        #expect(rebuilt.pages.map(\.number) == template.pages.map(\.number))
        #expect(rebuilt.bytes.count == template.bytes.count)
    }
}
