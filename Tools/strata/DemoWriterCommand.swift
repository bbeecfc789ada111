import Foundation
import Strata
import StrataCore

/// `strata demo-writer`: the demo's writer service (a child process of `strata demo`).
enum DemoWriterCommand: Command {
    static let spec = CommandSpec(
        name: "demo-writer", synopsis: "PATH",
        summary: "Internal: the writer process of 'strata demo'.",
        discussion: """
            Opens the store for writing, prints "ready", waits for "go" on stdin, then commits for
            --seconds: each commit creates, updates or deletes --changes orders. Its last stdout line
            is a JSON report.
            """,
        positionals: ["PATH"],
        options: [
            OptionSpec("seconds", value: "S", help: "how long to commit"),
            OptionSpec("changes", value: "N", help: "changes per commit (default 3)"),
            OptionSpec("durability", value: "MODE", help: "full, nometasync (now the same as full) or none"),
        ],
        hidden: true)

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let seconds = try arguments.number("seconds", default: 5, in: 0.01...86_400)
        let changes = try arguments.integer("changes", default: 3, in: 1...10_000)
        var options = DatabaseOptions()
        options.durability = DemoData.durability(try arguments.choice("durability", from: ["full", "nometasync", "none"], default: "full"))
        options.createIfMissing = false
        options.writerLockWait = .wait(seconds: 10)

        let store = try Store(at: path, options: options)
        defer { store.database.close() }
        let orders = try store.datastore(OrderFormat.self)
        guard DemoProtocol.readyAndWaitForGo() else { return }

        try DemoProtocol.finish(try commit(to: store, orders: orders, seconds: seconds, changes: changes))
    }

    /// Commits for `seconds` (synchronous: the store's blocking API, not its async overloads).
    private static func commit(to store: Store<ReadWrite>, orders: Datastore<OrderFormat, ReadWrite>, seconds: Double,
                               changes: Int) throws -> DemoChildReport {
        var report = DemoChildReport(role: "writer")
        report.firstGeneration = store.database.generation
        var random = SystemRandomNumberGenerator()
        let started = monotonicNanoseconds()
        let deadline = started + UInt64(seconds * 1e9)
        while monotonicNanoseconds() < deadline {
            try store.write { transaction in
                let writer = transaction[orders]
                for _ in 0..<changes {
                    let id = UInt64.random(in: 1...DemoData.idSpace, using: &random)
                    if var order = try writer.load(id) {
                        if Double.random(in: 0..<1, using: &random) < DemoData.deleteChance {
                            try writer.delete(id)
                            report.deleted += 1
                        } else {
                            order.amount = Int.random(in: 100...DemoData.maximumAmount, using: &random)
                            order.status = [.open, .paid, .shipped].randomElement(using: &random)!
                            order.updated = Date()
                            try writer.persist(order)
                            report.updated += 1
                        }
                    } else {
                        try writer.insert(DemoData.randomOrder(id: id, using: &random))
                        report.created += 1
                    }
                }
            }
            report.commits += 1
        }
        report.seconds = Double(monotonicNanoseconds() - started) / 1e9
        report.lastGeneration = store.database.generation
        return report
    }
}
