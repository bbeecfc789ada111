import Dispatch
import Foundation
import Glibc
import Strata
import StrataCore
import Synchronization

/// `strata demo`: one writer process and N worker processes share a store for a few seconds.
enum DemoCommand: Command {
    static let spec = CommandSpec(
        name: "demo", synopsis: "",
        summary: "Run a writer and worker processes on a scratch store and show what Strata does.",
        discussion: """
            Creates a store (default $TMPDIR/strata-demo-PID.strata) with an "orders" datastore
            (indexes on amount and customer) seeded with \(grouped(Int(Double(DemoData.idSpace) * DemoData.steadyFraction))) orders. Then a writer
            process commits creates, updates and deletes as fast as it can while each worker
            process loads orders by id, queries amount ranges through the index and times every
            commit notification (from the writer's commit time to the worker noticing it). All of
            them are this executable, started as child processes. At the end the demo prints
            throughput, notification latency, file size and page reuse, checks the store, and
            removes it unless --keep is given.
            """,
        positionals: [],
        options: [
            OptionSpec("seconds", short: "s", value: "S", help: "how long to run (default 5)"),
            OptionSpec("workers", short: "w", value: "N", help: "worker processes (default 3)"),
            OptionSpec("path", value: "P", help: "where to create the store (must not exist)"),
            OptionSpec("keep", help: "keep the store afterwards (inspect it with 'strata stat')"),
            OptionSpec("durability", value: "MODE", help: "full (default), nometasync (now the same as full) or none"),
        ])

    static func run(_ arguments: ParsedArguments) async throws {
        let seconds = try arguments.number("seconds", default: 5, in: 0.1...3600)
        let workerCount = try arguments.integer("workers", default: 3, in: 1...64)
        let keep = arguments.flag("keep")
        let durability = try arguments.choice("durability", from: ["full", "nometasync", "none"], default: "full")
        let path = arguments.string("path") ?? defaultPath()
        guard !StoreFiles.exists(path) else {
            throw ToolError.failure("\(path) already exists; pass a new --path (the demo creates its own store)")
        }

        var options = DatabaseOptions()
        options.durability = DemoData.durability(durability)
        do {
            let seed = try seedStore(at: path, options: options)
            Console.line("strata demo: 1 writer and \(plural(workerCount, "worker")) sharing \(path) for \(duration(seconds))")
            Console.line("  seeded \(grouped(seed.orders)) orders (datastore \"orders\", indexes on amount and customer), durability \(durability)")
            Console.flush()
            let reports = try runProcesses(path: path, seconds: seconds, workers: workerCount, durability: durability, keep: keep)
            try summarize(path: path, reports: reports, seed: seed, keep: keep)
        } catch {
            if !keep { try? FileManager.default.removeItem(atPath: path) }
            throw error
        }
        if !keep { try FileManager.default.removeItem(atPath: path) }
    }

    static func defaultPath() -> String {
        var directory = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        return directory + "/strata-demo-\(getpid()).strata"
    }

    // MARK: Seeding

    struct Seed { var orders = 0, generation: UInt64 = 0, pageCount: UInt64 = 0 }

    private static func seedStore(at path: String, options: DatabaseOptions) throws -> Seed {
        let store = try Store(at: path, options: options)
        defer { store.database.close() }
        let orders = try store.datastore(OrderFormat.self)
        var random = SystemRandomNumberGenerator()
        var seed = Seed()
        try store.write { transaction in
            let writer = transaction[orders]
            for id in 1...DemoData.idSpace where Double.random(in: 0..<1, using: &random) < DemoData.steadyFraction {
                try writer.insert(DemoData.randomOrder(id: id, using: &random))
                seed.orders += 1
            }
        }
        (seed.generation, seed.pageCount) = try store.database.read { ($0.generation, $0.pageCount) }
        return seed
    }

    // MARK: Processes

    private static func runProcesses(path: String, seconds: Double, workers: Int, durability: String, keep: Bool) throws -> [DemoChildReport] {
        let executable = selfExecutable()
        let common = [path, "--seconds", String(seconds)]
        var children: [DemoChild] = []
        defer { for child in children { child.kill() } }
        let writer = try DemoChild(name: "writer", executable: executable, arguments: ["demo-writer"] + common + ["--durability", durability])
        children.append(writer)
        try writer.expect("ready", timeout: 30)
        for number in 1...workers {
            children.append(try DemoChild(name: "worker \(number)", executable: executable,
                                          arguments: ["demo-worker"] + common + ["--worker", String(number)]))
        }
        for child in children.dropFirst() { try child.expect("ready", timeout: 30) }

        // Ctrl-C: stop the children and remove the store, as the normal end would.
        let interrupt = interruptHandler(pids: children.map(\.pid), path: path, keep: keep)
        defer { interrupt.cancel() }

        // Workers first, so they are measuring when the first commit lands.
        for child in children.dropFirst() { child.send("go") }
        writer.send("go")
        let progress = ProgressBar("demo")
        let started = monotonicNanoseconds()
        while true {
            let elapsed = Double(monotonicNanoseconds() - started) / 1e9
            if elapsed >= seconds || children.contains(where: { !$0.isRunning }) { break }
            progress.update(UInt64(elapsed * 1000), of: UInt64(seconds * 1000), detail: String(format: "%.1f / %.1f s", elapsed, seconds))
            usleep(50_000)
        }
        progress.finish()
        var reports: [DemoChildReport] = []
        for child in children {
            let line = try child.expectReport(timeout: seconds + 60)
            do {
                reports.append(try JSONDecoder().decode(DemoChildReport.self, from: Data(line.utf8)))
            } catch {
                throw ToolError.failure("demo \(child.name) sent an unreadable report: \(line.prefix(200))")
            }
        }
        for child in children { try child.waitForExit(timeout: 30) }
        return reports
    }

    private static func interruptHandler(pids: [Int32], path: String, keep: Bool) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            for pid in pids { Glibc.kill(pid, SIGKILL) }
            if !keep { try? FileManager.default.removeItem(atPath: path) }
            Console.error("demo interrupted\(keep ? "; the store is kept at \(path)" : "; removed \(path)")")
            exit(130)
        }
        source.resume()
        return source
    }

    /// This executable (the children run it with a demo-writer or demo-worker command).
    private static func selfExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return "/proc/self/exe" }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: Summary

    private static func summarize(path: String, reports: [DemoChildReport], seed: Seed, keep: Bool) throws {
        let writer = reports.first { $0.role == "writer" } ?? DemoChildReport(role: "writer")
        let workers = reports.filter { $0.role == "worker" }.sorted { $0.worker < $1.worker }
        var rows: [[String]] = []
        let commitRate = Double(writer.commits) / max(writer.seconds, 1e-9)
        let changes = writer.created + writer.updated + writer.deleted
        rows.append(["writer", "\(grouped(Int(commitRate))) commits/s",
                     "\(grouped(writer.commits)) commits: \(grouped(writer.created)) created, \(grouped(writer.updated)) updated, "
                     + "\(grouped(writer.deleted)) deleted (\(writer.commits == 0 ? 0 : changes / writer.commits) per commit)"])
        var totalRate = 0.0
        for worker in workers {
            let reads = worker.loads + worker.queries
            let rate = Double(reads) / max(worker.seconds, 1e-9)
            totalRate += rate
            let found = worker.loads == 0 ? 0 : Int((Double(worker.hits) / Double(worker.loads) * 100).rounded())
            rows.append(["worker \(worker.worker)", "\(grouped(Int(rate))) reads/s",
                         "\(grouped(worker.loads)) loads by id (\(found)% found), \(grouped(worker.queries)) amount-range queries "
                         + "(\(grouped(worker.queryResults)) orders)"])
        }
        if workers.count > 1 { rows.append(["workers", "\(grouped(Int(totalRate))) reads/s", "all workers together"]) }

        let latencies = workers.flatMap(\.latencies).sorted()
        let events = workers.reduce(0) { $0 + $1.events }
        if latencies.isEmpty {
            rows.append(["notify", "-", "no commit notifications arrived"])
        } else {
            func percentile(_ fraction: Double) -> Double {
                Double(latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]) / 1e6
            }
            rows.append(["notify", "p50 \(duration(percentile(0.5)))",
                         "p99 \(duration(percentile(0.99))), max \(duration(Double(latencies.last!) / 1e6)): commit timestamp to a worker "
                         + "noticing it, \(grouped(events)) events (stamped as the commit's meta is written, before its one sync)"])
        }

        let db = try Database(path: path, mode: .readOnly)
        defer { db.close() }
        let report = try db.check()
        let fileSize = try db.dataFileSize()
        let reused = try db.pagesWritten(after: seed.generation, below: min(seed.pageCount, report.pageCount))
        let growth = Int64(report.pageCount) - Int64(seed.pageCount)
        rows.append(["file", byteCount(fileSize),
                     "\(grouped(report.pageCount)) pages in use (\(growth >= 0 ? "+" : "")\(grouped(growth)) since seeding), "
                     + "\(grouped(report.freePages)) free now"])
        rows.append(["reuse", "\(grouped(reused)) pages",
                     "of the \(grouped(seed.pageCount)) pages the file had before the run were freed and written again"])
        rows.append(["check", report.isClean ? "clean" : "FAILED",
                     report.isClean ? "generation \(grouped(report.generation)), \(plural(report.trees.count, "tree"))"
                                    : report.problems.first ?? ""])
        rows.append(keep ? ["kept", path, "inspect it with 'strata stat \(path)'"]
                         : ["removed", path, "pass --keep to keep it"])
        Console.write("\n" + table(["", "", ""], rows))
        guard report.isClean else { throw ToolError.failure("the demo store failed its check: \(report.problems[0])") }
    }
}

/// A demo child process: this executable with a demo-writer or demo-worker command, talking one
/// line at a time over pipes.
final class DemoChild {
    let name: String
    private let process = Process()
    private let input = Pipe()
    private let inbox = Inbox()
    private var consumed = 0

    private final class Inbox: Sendable {
        struct State {
            var lines: [String] = []
            var partial: [UInt8] = []
            var errors: [UInt8] = []
            var outputClosed = false
        }
        let state = Mutex(State())
    }

    init(name: String, executable: String, arguments: [String]) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let inbox = self.inbox
        do {
            try process.run()
        } catch {
            throw ToolError.failure("cannot start the demo \(name) (\(executable)): \(describe(error))")
        }
        DemoChild.drain(output.fileHandleForReading, received: { chunk in
            inbox.state.withLock { state in
                state.partial.append(contentsOf: chunk)
                while let newline = state.partial.firstIndex(of: 0x0A) {
                    state.lines.append(String(decoding: state.partial[..<newline], as: UTF8.self))
                    state.partial.removeSubrange(...newline)
                }
            }
        }, ended: { inbox.state.withLock { $0.outputClosed = true } })
        DemoChild.drain(errors.fileHandleForReading, received: { chunk in
            inbox.state.withLock { $0.errors.append(contentsOf: chunk) }
        }, ended: {})
    }

    /// Reads `handle` on a thread of its own with blocking reads until end of file. Not
    /// `FileHandle.readabilityHandler`: on Linux clearing it cancels a dispatch source
    /// asynchronously while the pipe's descriptor may already be closed, which crashed a process
    /// inside libdispatch once under heavy churn (the test harness does the same, `PipeReader`).
    private static func drain(_ handle: FileHandle, received: @escaping @Sendable (Data) -> Void,
                              ended: @escaping @Sendable () -> Void) {
        let descriptor = handle.fileDescriptor
        Thread { [handle] in
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                received(Data(buffer[0..<count]))
            }
            withExtendedLifetime(handle) {}
            ended()
        }.start()
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the next line and requires it to be `expected`.
    func expect(_ expected: String, timeout: Double) throws {
        let line = try nextLine(timeout: timeout)
        guard line == expected else { throw ToolError.failure("demo \(name) said '\(line.prefix(200))' instead of '\(expected)'") }
    }

    /// The child's final report: its next line that looks like JSON.
    func expectReport(timeout: Double) throws -> String {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while true {
            let line = try nextLine(timeout: Double(deadline &- monotonicNanoseconds()) / 1e9)
            if line.hasPrefix("{") { return line }
        }
    }

    func waitForExit(timeout: Double) throws {
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while process.isRunning && monotonicNanoseconds() < deadline { usleep(2000) }
        guard !process.isRunning else { throw ToolError.failure("demo \(name) did not exit within \(duration(timeout))") }
        guard process.terminationStatus == 0 else { throw failure("exited with status \(process.terminationStatus)") }
    }

    private func nextLine(timeout: Double) throws -> String {
        let deadline = monotonicNanoseconds() + UInt64(max(0, timeout) * 1e9)
        while true {
            let index = consumed
            let (line, closed) = inbox.state.withLock { state in
                (state.lines.count > index ? state.lines[index] : nil, state.outputClosed)
            }
            if let line {
                consumed += 1
                return line
            }
            if closed || monotonicNanoseconds() >= deadline {
                if process.isRunning && !closed { throw ToolError.failure("demo \(name) gave no answer within \(duration(timeout))") }
                process.waitUntilExit()
                throw failure(process.terminationReason == .uncaughtSignal ? "was killed by signal \(process.terminationStatus)"
                                                                            : "exited with status \(process.terminationStatus)")
            }
            usleep(1000)
        }
    }

    /// A failure of this child, with the last line it wrote to stderr (its own error message).
    private func failure(_ what: String) -> ToolError {
        usleep(20_000)
        let errors = inbox.state.withLock { String(decoding: $0.errors, as: UTF8.self) }
        let last = errors.split(separator: "\n").last.map { String($0) }
        let message = last.map { $0.hasPrefix("strata: ") ? String($0.dropFirst(8)) : $0 }
        return ToolError.failure("demo \(name) \(what)\(message.map { ": " + $0 } ?? "")")
    }
}
