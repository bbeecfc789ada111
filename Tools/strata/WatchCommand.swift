import StrataCore

/// `strata watch PATH`: a live tail of the commits other processes make.
enum WatchCommand: Command {
    static let spec = CommandSpec(
        name: "watch", synopsis: "PATH",
        summary: "Print each commit as it happens: generation, changed trees, notification latency.",
        discussion: """
            Prints one line per event: the new generation, how many commits it covers (an observer
            that falls behind receives one event for several commits), the latency from the commit
            (the writer's clock) to this process noticing it, and the trees that changed. The first
            line says where watching starts. Runs until Ctrl-C, or until --count events.
            """,
        positionals: ["PATH"],
        options: [
            OptionSpec("trees", value: "A,B", help: "only commits that change one of these trees"),
            OptionSpec("count", short: "n", value: "N", help: "stop after N events"),
            OptionSpec("low-latency", help: "spin while commits flow (a few µs latency, one busy core)"),
        ])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let limit = try arguments.integer("count", default: 0, in: 1...1_000_000_000)
        let filter = arguments.string("trees").map { Set($0.split(separator: ",").map { String($0) }.filter { !$0.isEmpty }) }
        if let filter, filter.isEmpty { throw ToolError.usage(command: spec.name, "--trees needs at least one tree name") }
        let db = try Database(path: path, mode: .readOnly)
        defer { db.close() }
        let stream = try db.changes(trees: filter, schedule: arguments.flag("low-latency") ? .lowLatency : .standard)
        let scope = filter.map { "trees " + $0.sorted().joined(separator: ", ") } ?? "all trees"
        Console.line("watching \(path) (\(scope)) from generation \(stream.generation); Ctrl-C to stop")
        Console.flush()
        var seen = 0
        for await event in stream {
            let now = wallNanoseconds()
            let latency = now >= event.commitTime ? Double(now - event.commitTime) / 1e9 : 0
            let commits = event.generation - event.previousGeneration
            let trees = event.changedTrees.sorted().joined(separator: ", ")
            Console.line("generation \(event.generation)  +\(commits)  latency \(duration(latency))  \(trees.isEmpty ? "(no trees)" : trees)")
            Console.flush()
            seen += 1
            if limit > 0 && seen >= limit { break }
        }
        stream.cancel()
        // The poller ends a stream whose newest commits it cannot read (damage): say why.
        if let failure = stream.failure { throw failure }
    }
}
