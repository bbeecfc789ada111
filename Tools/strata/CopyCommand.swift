import StrataCore

/// `strata copy PATH DEST [--compact]`: an online backup of one read snapshot.
enum CopyCommand: Command {
    static let spec = CommandSpec(
        name: "copy", synopsis: "PATH DEST",
        summary: "Back up a store from one consistent snapshot, even while a writer commits.",
        discussion: """
            Holds one read transaction for the whole copy: the writer keeps committing but cannot
            reuse the pages that snapshot reaches. Without --compact, the data file's pages up to the
            snapshot's high-water mark are copied as they are and the snapshot's meta is written into
            its slot (the other meta slot is cleared), so DEST opens at exactly the snapshot's generation
            and keeps PATH's format. With --compact, DEST is a new store that receives every tree entry
            by entry in key order: no free pages, a minimal file, a new generation count, and this
            build's format (a format-2 or format-3 store becomes format 4, which older builds of Strata refuse).
            DEST must not exist. The copy is
            synced to disk and verified with a full check before the command reports success.
            """,
        positionals: ["PATH", "DEST"],
        options: [OptionSpec("compact", help: "rebuild the trees into a minimal new store instead of copying pages")])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let destination = arguments.positionals[1]
        guard !StoreFiles.exists(destination) else {
            throw ToolError.failure("\(destination) already exists; copy never overwrites, choose a new DEST")
        }
        let source = try Database(path: path, mode: .readOnly)
        defer { source.close() }
        let compact = arguments.flag("compact")
        let started = monotonicNanoseconds()
        let progress = ProgressBar(compact ? "copy --compact" : "copy")
        let copied = try source.copy(to: destination, compact: compact) { done, total in
            progress.update(done, of: total, detail: compact ? "\(grouped(done)) entries" : byteCount(done * UInt64(source.pageSize)))
        }
        progress.finish()
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9

        // Verify what was written, as a reader of DEST would see it.
        let copy = try Database(path: destination, mode: .readOnly)
        defer { copy.close() }
        let report = try copy.check()
        let fileSize = try copy.dataFileSize()
        let sourceBytes = copied.sourcePageCount * UInt64(source.pageSize)
        var text = "\(compact ? "compacted" : "copied") generation \(copied.generation) of \(path) "
        text += "(\(plural(copied.sourcePageCount, "page")), \(byteCount(sourceBytes))) into \(destination) in \(duration(elapsed))\n"
        text += "\(destination): generation \(report.generation), file \(byteCount(fileSize)), \(plural(report.pageCount, "page")) "
        text += "(\(grouped(report.treePages)) in trees, \(grouped(report.freePages)) free), \(plural(report.trees.count, "tree")), "
        text += report.isClean ? "check clean\n" : "check found \(plural(report.problems.count, "problem"))\n"
        Console.write(text)
        guard report.isClean else {
            throw ToolError.failure("the copy at \(destination) does not check clean: \(report.problems[0]); keep the source and report this")
        }
    }
}
