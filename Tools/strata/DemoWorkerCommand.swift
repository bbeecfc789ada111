import Foundation
import Strata
import StrataCore
import Synchronization

/// `strata demo-worker`: one of the demo's reader processes (a child process of `strata demo`).
enum DemoWorkerCommand: Command {
    static let spec = CommandSpec(
        name: "demo-worker", synopsis: "PATH",
        summary: "Internal: a worker process of 'strata demo'.",
        discussion: """
            Opens the store read-only and subscribes to its commits, prints "ready", waits for "go"
            on stdin, then for --seconds loads orders by id (80%) and queries amount ranges through
            the index (20%) while timing every commit notification. Its last stdout line is a JSON
            report.
            """,
        positionals: ["PATH"],
        options: [
            OptionSpec("seconds", value: "S", help: "how long to read"),
            OptionSpec("worker", value: "N", help: "this worker's number (for the report)"),
        ],
        hidden: true)

    /// Commit notifications seen while the demo runs, shared with the observing task.
    final class Notifications: Sendable {
        struct State {
            var recording = false
            var events = 0
            var latencies: [UInt32] = []
        }
        let state = Mutex(State())

        func record(commitTime: UInt64) {
            let now = wallNanoseconds()
            let micros = now > commitTime ? UInt32(min(UInt64(UInt32.max), (now - commitTime) / 1000)) : 0
            state.withLock { state in
                guard state.recording else { return }
                state.events += 1
                if state.latencies.count < 50_000 { state.latencies.append(micros) }
            }
        }
    }

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let seconds = try arguments.number("seconds", default: 5, in: 0.01...86_400)
        var report = DemoChildReport(role: "worker")
        report.worker = try arguments.integer("worker", default: 1, in: 0...1_000_000)

        let store = try Store(at: path, mode: .readOnly)
        defer { store.database.close() }
        let orders = try store.datastore(OrderFormat.self)
        let notifications = Notifications()
        let stream = try store.database.changes(trees: [OrderFormat.name])
        let observer = Task.detached {
            for await event in stream { notifications.record(commitTime: event.commitTime) }
        }
        guard DemoProtocol.readyAndWaitForGo() else {
            stream.cancel()
            return
        }
        notifications.state.withLock { $0.recording = true }

        try read(orders, seconds: seconds, into: &report)
        // Commits made just before the writer stopped may still be on their way.
        usleep(20_000)
        stream.cancel()
        await observer.value
        (report.events, report.latencies) = notifications.state.withLock { ($0.events, $0.latencies) }
        try DemoProtocol.finish(report)
    }

    /// Loads and queries for `seconds` (synchronous: the blocking API, not its async overloads).
    private static func read(_ orders: Datastore<OrderFormat, ReadOnly>, seconds: Double, into report: inout DemoChildReport) throws {
        var random = SystemRandomNumberGenerator()
        let started = monotonicNanoseconds()
        let deadline = started + UInt64(seconds * 1e9)
        var operations = 0
        while operations % 64 != 0 || monotonicNanoseconds() < deadline {
            operations += 1
            if Int.random(in: 0..<10, using: &random) < 8 {
                let id = UInt64.random(in: 1...DemoData.idSpace, using: &random)
                if try orders.load(id) != nil { report.hits += 1 }
                report.loads += 1
            } else {
                let low = Int.random(in: 0...DemoData.maximumAmount, using: &random)
                report.queryResults += try orders.load(low..<(low + 500), from: \.amount, limit: 20).count
                report.queries += 1
            }
        }
        report.seconds = Double(monotonicNanoseconds() - started) / 1e9
    }
}
