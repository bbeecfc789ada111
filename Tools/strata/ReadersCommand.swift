import StrataCore

/// `strata readers PATH`: the reader table, with lag, age, pinned pages and liveness.
enum ReadersCommand: Command {
    static let spec = CommandSpec(
        name: "readers", synopsis: "PATH",
        summary: "List the store's reader slots: pid, snapshot, lag, age, pinned pages, alive or dead.",
        discussion: """
            A reader pins its snapshot: pages freed after it (its "pinned" pages) cannot be reused
            while it lives, so a long-lived reader makes the file grow. A dead reader is a slot whose
            process exited without releasing it; the writer reaps those by itself when they hold back
            reuse, and --reap frees them now. Slots of processes that have the store open but no
            read transaction running show no snapshot.
            """,
        positionals: ["PATH"],
        options: [OptionSpec("reap", help: "free the slots of dead readers")])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let db = try Database(path: path, mode: .readOnly)
        defer { db.close() }
        if arguments.flag("reap") {
            let reaped = db.reapDeadReaders()
            Console.line("reaped \(plural(reaped, "dead reader slot"))")
        }
        let readers = try db.readerReport().filter { !$0.isThisHandle }
        let live = readers.filter(\.isAlive).count
        Console.line("\(path): generation \(db.generation), \(plural(readers.count, "reader slot")) in use of \(db.readerCapacity) "
                     + "(\(live) live, \(readers.count - live) dead)")
        if !readers.isEmpty { Console.write(render(readers)) }
    }

    static func render(_ readers: [ReaderInfo]) -> String {
        let rows = readers.map { reader -> [String] in
            let idle = reader.snapshot == 0
            return [String(reader.slot), String(reader.pid), idle ? "-" : String(reader.snapshot), idle ? "-" : grouped(reader.lag),
                    idle ? "-" : duration(reader.age), grouped(reader.pinnedPages), reader.isAlive ? "alive" : "dead"]
        }
        return table(["slot", "pid", "snapshot", "lag", "age", "pinned", "state"], rows, right: [0, 1, 2, 3, 4, 5])
    }
}
