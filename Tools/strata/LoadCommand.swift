import Foundation
import Glibc
import StrataCore

/// `strata load PATH`: reads the dump format (see README.md) into a store.
enum LoadCommand: Command {
    static let spec = CommandSpec(
        name: "load", synopsis: "PATH",
        summary: "Read a dump (stdin or --input FILE) into a store, creating it if needed.",
        discussion: """
            Trees are created as they appear and entries are put in the order given, committing every
            --batch entries (so a load is not one atomic transaction: a failed load leaves the batches
            before the failure committed). A new store gets the dump's page size. By default the
            store must be new or hold no trees; with --replace, each tree in the dump replaces the
            tree of that name (its old entries are removed) and other trees are kept. Fields other
            than "tree", "k" and "v" (such as dump --decode's "json") are ignored.
            """,
        positionals: ["PATH"],
        options: [
            OptionSpec("input", short: "i", value: "FILE", help: "read the dump from FILE instead of stdin"),
            OptionSpec("replace", help: "replace trees that already exist (others are kept)"),
            OptionSpec("batch", value: "N", help: "entries per commit (default 10000)"),
        ])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let replace = arguments.flag("replace")
        let batch = try arguments.integer("batch", default: 10_000, in: 1...10_000_000)
        let inputPath = arguments.string("input")
        let source = inputPath ?? "stdin"
        var descriptor: Int32 = 0
        if let inputPath {
            descriptor = open(inputPath, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw StrataError.io(operation: "open", path: inputPath, errno: errno) }
        }
        defer { if inputPath != nil { close(descriptor) } }
        var info = stat()
        let totalBytes: UInt64 = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? UInt64(info.st_size) : 0
        if inputPath == nil && isatty(0) == 1 {
            Console.note("strata load: reading a dump from the terminal; end with Ctrl-D (or pass --input FILE)")
        }

        let reader = LineReader(descriptor: descriptor, path: source)
        func fail(_ message: String) -> ToolError { ToolError.failure("\(source) line \(reader.lineNumber): \(message)") }

        // The header decides the page size of a new store.
        var header: [(String, LineValue)] = []
        while header.isEmpty, let fields = try reader.nextLine({ line -> [(String, LineValue)] in
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return [] }
            do { return try LineParser.parse(line) } catch LineParser.Failure.invalid(let reason) { throw fail("not a strata dump: \(reason)") }
        }) {
            header = fields
        }
        guard case .number(let versionText)? = header.first(where: { $0.0 == "strata_dump" })?.1, let version = Int(versionText) else {
            throw ToolError.failure("\(source) is not a strata dump: its first line has no \"strata_dump\" field")
        }
        guard version == Interchange.version else {
            throw ToolError.failure("\(source) is dump format \(version); this strata reads format \(Interchange.version)")
        }
        var options = DatabaseOptions()
        if case .number(let sizeText)? = header.first(where: { $0.0 == "page_size" })?.1, let pageSize = Int(sizeText),
           pageSize >= 4096, pageSize <= 32768, pageSize & (pageSize - 1) == 0 {
            options.pageSize = pageSize
        }

        let existed = StoreFiles.exists(path)
        let db = try Database(path: path, mode: .readWrite, options: options)
        do {
            let summary = try load(into: db, from: reader, replace: replace, batch: batch, totalBytes: totalBytes, fail: fail)
            db.close()
            Console.line("loaded \(plural(summary.trees, "tree")), \(plural(summary.entries, "entry", "entries")) into \(path) "
                         + "in \(plural(summary.commits, "commit")) (generation \(summary.generation))")
        } catch {
            db.close()
            // A store this load created and could not finish is removed rather than left half-loaded.
            if !existed { try? FileManager.default.removeItem(atPath: path) }
            throw error
        }
    }

    private struct Summary { var trees = 0, entries = 0, commits = 0, generation: UInt64 = 0 }

    private static func load(into db: Database, from reader: LineReader, replace: Bool, batch: Int, totalBytes: UInt64,
                             fail: (String) -> ToolError) throws -> Summary {
        var summary = Summary()
        let startGeneration = db.generation
        var transaction = try db.beginWrite()
        defer { transaction.abort() }
        let existing = try transaction.treeNames()
        if !existing.isEmpty && !replace {
            throw ToolError.failure("\(db.path) already holds \(plural(existing.count, "tree")); load into a new path, or pass --replace to replace the trees the dump contains")
        }
        var loaded = Set<String>()
        var current: (name: String, tree: Tree)?
        var pending = 0
        let progress = ProgressBar("load")
        defer { progress.finish() }

        func commit() throws {
            try transaction.commit()
            transaction = try db.beginWrite()
            if let name = current?.name { current = (name, try transaction.tree(name)) }
            pending = 0
        }

        while let fields = try reader.nextLine({ line -> [(String, LineValue)] in
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return [] }
            do { return try LineParser.parse(line) } catch LineParser.Failure.invalid(let reason) { throw fail(reason) }
        }) {
            if fields.isEmpty { continue }
            func field(_ name: String) -> LineValue? { fields.first { $0.0 == name }?.1 }
            do {
                if let name = field("tree") {
                    guard case .string(let bytes) = name, let text = String(validating: bytes, as: UTF8.self), !text.isEmpty else {
                        throw fail("\"tree\" must be a non-empty string")
                    }
                    if loaded.contains(text) {
                        current = (text, try transaction.tree(text))
                    } else if let tree = try transaction.treeIfPresent(text) {
                        try transaction.clear(tree)
                        current = (text, tree)
                    } else {
                        current = (text, try transaction.createTree(text))
                    }
                    if loaded.insert(text).inserted { summary.trees += 1 }
                } else if case .string(let keyText)? = field("k"), case .string(let valueText)? = field("v") {
                    guard let tree = current?.tree else { throw fail("an entry comes before any {\"tree\":...} line") }
                    guard let key = keyText.withUnsafeBytes({ Base64.decode($0) }) else { throw fail("\"k\" is not base64") }
                    guard let value = valueText.withUnsafeBytes({ Base64.decode($0) }) else { throw fail("\"v\" is not base64") }
                    try transaction.put(key, value, in: tree)
                    summary.entries += 1
                    pending += 1
                    if pending >= batch { try commit() }
                    if summary.entries % 4096 == 0 && totalBytes > 0 {
                        progress.update(reader.bytesRead, of: totalBytes, detail: "\(grouped(summary.entries)) entries")
                    }
                } else if field("strata_dump") != nil {
                    throw fail("a second dump header; load one dump at a time")
                } else {
                    throw fail("expected {\"tree\":NAME} or {\"k\":BASE64,\"v\":BASE64}")
                }
            } catch let error as ToolError {
                throw error
            } catch {
                throw fail(describe(error))
            }
        }
        try transaction.commit()
        summary.generation = db.generation
        // A batch that changed nothing commits nothing.
        summary.commits = Int(summary.generation - startGeneration)
        return summary
    }
}
