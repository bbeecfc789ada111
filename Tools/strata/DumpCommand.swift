import Glibc
import Strata
import StrataCore

/// `strata dump PATH [TREE ...]`: every entry of one snapshot as JSON lines (see README.md).
enum DumpCommand: Command {
    static let spec = CommandSpec(
        name: "dump", synopsis: "PATH [TREE ...]",
        summary: "Write trees (all, or the ones named) as JSON lines: the interchange format 'load' reads.",
        discussion: """
            Line 1 is {"strata_dump":1,"page_size":N,"generation":G}; then, per tree in byte order of
            its name, {"tree":"NAME"} and one {"k":"BASE64","v":"BASE64"} line per entry in key order.
            Datastore bookkeeping trees (NAME#info, NAME#log, NAME#index.X) are dumped like any other
            tree. Everything comes from one read snapshot, so a dump is consistent while a writer
            commits. With --decode, instance entries of datastores (primary trees and direct indexes)
            also carry "json": the instance as JSON, no Swift type needed (binary-coded ones are
            rendered with the field description the store records; a field it does not describe
            shows as {"$base64":...}); 'load' ignores that field. A line the field would make
            longer than 'load' reads (a value of more than about a gigabyte) is written without it.
            """,
        positionals: ["PATH", "TREE"], required: 1, variadic: true,
        options: [
            OptionSpec("output", short: "o", value: "FILE", help: "write to FILE instead of stdout (FILE must not exist)"),
            OptionSpec("decode", help: "add each datastore instance as JSON (binary- and JSON-coded)"),
        ])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        var requested: [String] = []
        // Repeats dropped by bytes (`TreeName`): two names only canonically equivalent are two trees.
        for name in arguments.positionals.dropFirst() where !requested.contains(where: { TreeName.same($0, name) }) { requested.append(name) }
        let decode = arguments.flag("decode")

        let db = try Database(path: path, mode: .readOnly)
        defer { db.close() }
        let output = arguments.string("output")
        let sink = try output.map { try ByteSink(creating: $0) } ?? ByteSink()
        do {
            try dump(db, path: path, requested: requested, decode: decode, to: sink)
        } catch {
            // A partial dump must not pass for a complete one.
            if let output { unlink(output) }
            throw error
        }
    }

    private static func dump(_ db: Database, path: String, requested: [String], decode: Bool, to sink: ByteSink) throws {
        // The datastores whose instances --decode shows as JSON, and how.
        let datastores = decode ? try db.read { try StoreInspector.datastores(in: $0) } : []
        let progress = ProgressBar("dump")
        defer { progress.finish() }
        try db.dump(trees: requested, annotate: decode ? { tree, value in
            guard let datastore = datastores.first(where: { $0.holdsInstances(tree) }) else { return nil }
            return StoreInspector.json(ofEnvelope: value.bytes, in: datastore)
        } : nil, progress: { done, total in
            progress.update(done, of: total, detail: "\(grouped(done)) entries")
        }) { chunk in
            try sink.write(chunk)
        }
    }
}
