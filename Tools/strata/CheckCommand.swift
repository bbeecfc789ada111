import Strata
import StrataCore

/// `strata check PATH`: verifies every page of the latest snapshot.
enum CheckCommand: Command {
    static let spec = CommandSpec(
        name: "check", synopsis: "PATH",
        summary: "Verify every page of the latest snapshot; exit 1 if anything is wrong.",
        discussion: """
            Checks page checksums and headers, key order within pages and against parent separators,
            uniform tree depth, entry and page counts against tree records, overflow runs, and that
            every page below the high-water mark is in exactly one tree or listed once as free.
            Then every datastore of the typed layer, without its format: instances are envelopes,
            every index entry names an existing instance (a direct one holds its bytes), single-valued
            indexes have one entry per instance (Store.check()). Each problem is printed on its own
            line, followed by a summary line. Exit status: 0 when
            clean, 1 when problems were found (or the store cannot be opened), 2 for usage errors.
            Safe while a writer commits: it checks one read snapshot.
            """,
        positionals: ["PATH"])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let store = try Store(at: path, mode: .readOnly)
        defer { store.database.close() }
        let progress = ProgressBar("check: verifying pages")
        let started = monotonicNanoseconds()
        let storeReport = try store.check { done, total in progress.update(done, of: total) }
        progress.finish()
        let report = storeReport.pages
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9
        var text = ""
        let problems = storeReport.problems
        for problem in problems { text += "problem: \(problem)\n" }
        let entries = report.entryCount
        text += "\(path): generation \(report.generation), \(plural(report.pageCount, "page")) checked "
        text += "(\(grouped(report.treePages)) in trees, \(grouped(report.freePages)) free), "
        text += "\(plural(report.trees.count, "tree")), \(plural(entries, "entry", "entries"))"
        text += storeReport.datastores.isEmpty ? "" : ", \(plural(storeReport.datastores.count, "datastore"))"
        text += " in \(duration(elapsed)): "
        // The checker stops listing after 200 problems.
        let atLeast = report.problems.count >= 200 || storeReport.datastores.contains { $0.problems.count >= DatastoreCheckReport.problemLimit } ? "at least " : ""
        text += storeReport.isClean ? "clean\n" : "\(atLeast)\(plural(problems.count, "problem"))\n"
        Console.write(text)
        if !storeReport.isClean {
            throw ToolError.failure("\(path) failed its check with \(plural(problems.count, "problem")) (listed above); restore it from a backup")
        }
    }
}
