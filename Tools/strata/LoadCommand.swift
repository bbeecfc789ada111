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

        let dump = try DumpReader(fileDescriptor: descriptor, name: source)
        var options = DatabaseOptions()
        if let pageSize = dump.pageSize { options.pageSize = pageSize }

        let existed = StoreFiles.exists(path)
        let db = try Database(path: path, mode: .readWrite, options: options)
        do {
            let progress = ProgressBar("load")
            let summary = try db.load(dump, replace: replace, batch: batch) { entries, bytesRead in
                if totalBytes > 0 { progress.update(bytesRead, of: totalBytes, detail: "\(grouped(entries)) entries") }
            }
            progress.finish()
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
}
