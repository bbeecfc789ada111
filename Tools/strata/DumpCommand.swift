import Foundation
import Glibc
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
            commits. With --decode, entries of JSON-coded datastores also carry "json": the decoded
            instance (binary-coded instances stay base64 only); 'load' ignores that field.
            """,
        positionals: ["PATH", "TREE"], required: 1, variadic: true,
        options: [
            OptionSpec("output", short: "o", value: "FILE", help: "write to FILE instead of stdout (FILE must not exist)"),
            OptionSpec("decode", help: "add the decoded JSON of JSON-coded datastore instances"),
        ])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        var requested: [String] = []
        for name in arguments.positionals.dropFirst() where !requested.contains(name) { requested.append(name) }
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
        let transaction = try db.beginRead()
        defer { transaction.end() }
        let names = try transaction.treeNames()
        for name in requested where !names.contains(name) {
            let known = names.isEmpty ? "none" : names.prefix(10).joined(separator: ", ") + (names.count > 10 ? ", ..." : "")
            throw ToolError.failure("\(path) has no tree named '\(name)' (it has: \(known))")
        }
        let trees = requested.isEmpty ? names : requested
        let jsonDatastores = decode ? try StoreCatalog.datastores(in: transaction).filter { $0.coding == "json" } : []

        let total = try trees.reduce(UInt64(0)) { $0 + UInt64(try transaction.count(transaction.tree($1))) }
        let progress = ProgressBar("dump")
        defer { progress.finish() }
        var done: UInt64 = 0
        sink.append(Interchange.headerLine(pageSize: db.pageSize, generation: transaction.generation) + "\n")
        for name in trees {
            let tree = try transaction.tree(name)
            let decodesJSON = jsonDatastores.contains { $0.owns(name) }
            sink.append(Interchange.treeLine(name) + "\n")
            try transaction.scan(tree) { key, value in
                sink.append("{\"k\":\"")
                key.withUnsafeBytes { sink.appendBase64($0) }
                sink.append("\",\"v\":\"")
                value.withUnsafeBytes { sink.appendBase64($0) }
                sink.append("\"")
                if decodesJSON, let payload = StoreCatalog.jsonPayload(ofEnvelope: value.bytes) {
                    sink.append(",\"json\":")
                    sink.append(singleLine(payload))
                }
                sink.append("}\n")
                try sink.flushIfFull()
                done += 1
                if done % 4096 == 0 { progress.update(done, of: total, detail: "\(grouped(done)) entries") }
                return true
            }
        }
        try sink.flush()
    }

    /// JSON text on one line (JSONEncoder output already is; anything else is re-serialized).
    private static func singleLine(_ payload: Data) -> [UInt8] {
        if !payload.contains(0x0A) && !payload.contains(0x0D) { return Array(payload) }
        if let object = try? JSONSerialization.jsonObject(with: payload, options: [.fragmentsAllowed]),
           let compact = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed]) {
            return Array(compact)
        }
        return Array("null".utf8)
    }
}
