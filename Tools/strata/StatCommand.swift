import Foundation
import Strata
import StrataCore

/// `strata stat PATH`: what is in a store and how its file is used, like mdb_stat.
enum StatCommand: Command {
    static let spec = CommandSpec(
        name: "stat", synopsis: "PATH",
        summary: "Show a store's format, sizes, trees, datastores and readers.",
        discussion: """
            Opens the store read-only. Page accounting (pages in trees, free pages) comes from a walk
            of every page of the latest snapshot, the same walk 'strata check' does; if it finds
            problems, stat prints the statistics, then exits with status 1.
            """,
        positionals: ["PATH"])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[0]
        let db = try Database(path: path, mode: .readOnly)
        defer { db.close() }
        let (commitTime, datastores) = try db.read { transaction in
            (transaction.commitTime, try StoreInspector.datastores(in: transaction))
        }
        let progress = ProgressBar("stat: walking pages")
        let report = try db.check { done, total in progress.update(done, of: total) }
        progress.finish()
        let fileSize = try db.dataFileSize()
        let readers = try db.readerReport().filter { !$0.isThisHandle }

        let usedBytes = report.pageCount * UInt64(report.pageSize)
        var text = ""
        text += "store        \(path)\n"
        text += "format       version \(db.storeFormatVersion), page size \(report.pageSize)\n"
        let age = Double(wallNanoseconds()) / 1e9 - Double(commitTime) / 1e9
        text += "generation   \(report.generation)"
        text += commitTime == 0 ? " (new store)\n" : ", committed \(timestamp(commitTime)) (\(duration(max(0, age))) ago)\n"
        if let skipped = db.skippedCommit { text += "recovery     \(skipped)\n" }
        text += "file size    \(byteCount(fileSize)) (\(grouped(fileSize)) bytes)\n"
        text += "used size    \(byteCount(usedBytes)) (\(grouped(report.pageCount)) pages × \(report.pageSize))\n"
        // The walk counts the catalog's and the free list's own pages as tree pages too.
        let named = report.namedTreePages
        let bookkeeping = report.treePages - min(report.treePages, named)
        text += "pages        \(grouped(named)) in trees, \(grouped(bookkeeping)) catalog and free list, \(grouped(report.freePages)) free, \(report.metaPages) meta"
        let unaccounted = report.pageCount - min(report.pageCount, report.treePages + report.freePages + report.metaPages)
        text += unaccounted > 0 ? ", \(grouped(unaccounted)) lost\n" : "\n"

        text += "\ntrees (\(report.trees.count))\n"
        if report.trees.isEmpty {
            text += "  (none)\n"
        } else {
            let rows = report.trees.map { tree -> [String] in
                let record = tree.record
                return [tree.name, grouped(record.entries), String(record.depth), grouped(record.branchPages), grouped(record.leafPages),
                        grouped(record.overflowPages), String(record.lastModified)]
            }
            text += table(["name", "entries", "depth", "branch", "leaf", "overflow", "modified"], rows, right: [1, 2, 3, 4, 5, 6])
        }

        if !datastores.isEmpty {
            text += "\ndatastores (\(datastores.count))\n"
            let rows = datastores.map { store -> [String] in
                let indexes = store.indexes.map { $0.name + ($0.isDirect ? " (direct)" : "") }.joined(separator: ", ")
                return [store.name, grouped(store.instances), store.version ?? "?", store.coding.map { $0 == .json ? "json" : "binary" } ?? "-", indexes.isEmpty ? "-" : indexes]
            }
            text += table(["name", "instances", "version", "coding", "indexes"], rows, right: [1])
        }

        let live = readers.filter(\.isAlive)
        text += "\nreaders      \(live.count) live"
        if live.count != readers.count { text += ", \(readers.count - live.count) dead (reap with 'strata readers \(path) --reap')" }
        text += "\n"
        if !readers.isEmpty { text += ReadersCommand.render(readers) }
        Console.write(text)

        if !report.isClean {
            throw ToolError.failure("\(path) has \(plural(report.problems.count, "problem")); run 'strata check \(path)' to list them")
        }
    }
}
