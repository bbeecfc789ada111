import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing

/// The `strata` command-line tool, run as the built executable.
@Suite(.serialized) struct CLITests {
    // MARK: Running the tool

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Runs `strata` with `arguments`, stdin from `input` (a file) or /dev/null; output goes through
    /// files so large outputs never block on a pipe.
    func strata(_ arguments: [String], input: String? = nil) throws -> Result {
        let scratch = NSTemporaryDirectory() + "strata-cli-\(getpid())-\(UUID().uuidString.prefix(8))"
        _ = FileManager.default.createFile(atPath: scratch + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: scratch + ".out")
            try? FileManager.default.removeItem(atPath: scratch + ".err")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: builtExecutable("strata"))
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: scratch + ".out")
        process.standardError = FileHandle(forWritingAtPath: scratch + ".err")
        process.standardInput = input.flatMap { FileHandle(forReadingAtPath: $0) } ?? FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      stdout: (try? String(contentsOfFile: scratch + ".out", encoding: .utf8)) ?? "",
                      stderr: (try? String(contentsOfFile: scratch + ".err", encoding: .utf8)) ?? "")
    }

    /// A failure is exactly one `strata: ...` line on stderr.
    func expectOneErrorLine(_ result: Result, _ context: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(context): stderr was \(result.stderr)", sourceLocation: sourceLocation)
        #expect(lines.first?.hasPrefix("strata: ") == true, "\(context): stderr was \(result.stderr)", sourceLocation: sourceLocation)
    }

    // MARK: Fixtures

    struct Note: Codable, Sendable, Identifiable, Equatable {
        var id: Int
        var text: String
    }

    /// A JSON-coded datastore, for `dump --decode`.
    struct NoteFormat: DatastoreFormat {
        static let name = "notes"
        static var coding: InstanceCoding { .json }
        typealias Instance = Note
        typealias Identifier = Int
        let text = Index(\.text)
    }

    /// Books and notes through the typed layer, a raw tree with binary keys and a large (overflow)
    /// value, a bulk tree larger than one load batch, and an empty tree.
    func makeStore(at path: String, bulk: Int = 0) throws {
        let store = try Store(at: path)
        defer { store.database.close() }
        let books = try store.datastore(BookFormat.self)
        for book in sampleBooks() { try books.persist(book) }
        let notes = try store.datastore(NoteFormat.self)
        try notes.persist(Note(id: 1, text: "line one\nline \"two\""))
        try notes.persist(Note(id: 2, text: "ünïcödé"))
        try store.database.write { tx in
            let raw = try tx.createTree("raw")
            for byte in 0...255 { try tx.put([UInt8(byte), 0, UInt8(255 - byte)], [UInt8](repeating: UInt8(byte), count: byte), in: raw) }
            try tx.put("big", (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }, in: raw)
            try tx.createTree("empty")
            if bulk > 0 {
                let tree = try tx.createTree("bulk")
                for i in 0..<bulk { try tx.put("key-\(i)", "value \(i)", in: tree) }
            }
        }
    }

    // MARK: stat and check

    @Test func statAndCheckOnAGoodStore() throws {
        let dir = TemporaryDirectory()
        try makeStore(at: dir.path)
        let stat = try strata(["stat", dir.path])
        #expect(stat.status == 0, "\(stat.stderr)")
        #expect(stat.stderr.isEmpty)
        for expected in ["format       version \(Database.formatVersion), page size", "generation", "file size", "used size", "free", "trees (",
                         "books#index.title", "raw", "empty", "datastores (2)", "notes", "json", "binary", "readers      0 live"] {
            #expect(stat.stdout.contains(expected), "missing '\(expected)' in:\n\(stat.stdout)")
        }
        let check = try strata(["check", dir.path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("pages checked"))
        #expect(check.stdout.hasSuffix(": clean\n"))
    }

    @Test func aFlippedLeafPageFailsCheckAndStat() throws {
        let dir = TemporaryDirectory()
        let pageSize: Int
        let leaf: UInt64
        do {
            let db = try Database(path: dir.path)
            defer { db.close() }
            pageSize = db.pageSize
            leaf = try db.write { tx in
                let tree = try tx.createTree("t")
                for i in 0..<20 { try tx.put("key-\(i)", "value-\(i)", in: tree) }
                let record = try tx.record(of: tree)
                #expect(record.depth == 1) // the root is a leaf
                return record.root
            }
            // A newer commit that leaves the leaf alone: damage to the pages of the newest commit
            // is found when the store is opened (it opens at the commit before, see
            // `MetaReader`), damage to older pages by `check`.
            try db.write { tx in try tx.put("other", "tree", in: try tx.createTree("u")) }
        }
        let copy = dir.parent + "/corrupt.strata"
        try FileManager.default.copyItem(atPath: dir.path, toPath: copy)
        let data = try FileHandle(forUpdating: URL(fileURLWithPath: copy + "/data"))
        let offset = UInt64(leaf) * UInt64(pageSize) + UInt64(pageSize) - 20
        try data.seek(toOffset: offset)
        let original = try data.read(upToCount: 4) ?? Data()
        try data.seek(toOffset: offset)
        try data.write(contentsOf: Data(original.map { $0 ^ 0xFF }))
        try data.close()

        #expect(try strata(["check", dir.path]).status == 0)
        let check = try strata(["check", copy])
        #expect(check.status == 1)
        #expect(check.stdout.contains("problem: tree 't': page \(leaf) fails its checksum"), "\(check.stdout)")
        #expect(check.stdout.range(of: #": \d+ problems?\n$"#, options: .regularExpression) != nil, "\(check.stdout)")
        expectOneErrorLine(check, "check")
        let stat = try strata(["stat", copy])
        #expect(stat.status == 1)
        #expect(stat.stdout.contains("trees (2)"))
        #expect(stat.stderr.contains("problem"), "\(stat.stderr)")
        expectOneErrorLine(stat, "stat")
    }

    /// Entry and page counts in tree records come from the file: damaged ones that add up past
    /// `UInt64.max` must make `check` and `stat` report problems, not trap while totalling them.
    @Test func hugeCountsInDamagedTreeRecordsAreReportedNotTrapped() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        defer { db.close() }
        let records = try db.write { tx in
            try ["a", "b", "c"].map { name in
                let tree = try tx.createTree(name)
                for i in 0..<10 { try tx.put("key-\(i)", "value-\(i)", in: tree) }
                return try tx.record(of: tree)
            }
        }
        // Overwrite each record's entry count and leaf-page count (bytes 8 and 24 of the 64-byte
        // record, found by its root and entry count) with 2^63, leaving the page checksum stale.
        // This handle stays open, so the tool trusts the newest commit without verifying it and
        // meets the damage in the records themselves.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.path + "/data")))
        for record in records {
            let pattern = withUnsafeBytes(of: record.root.littleEndian) { Array($0) } + withUnsafeBytes(of: record.entries.littleEndian) { Array($0) }
            let at = try #require((0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) })
            for field in [8, 24] { bytes.replaceSubrange((at + field)..<(at + field + 8), with: withUnsafeBytes(of: (UInt64(1) << 63).littleEndian) { Array($0) }) }
        }
        let data = try FileHandle(forUpdating: URL(fileURLWithPath: dir.path + "/data"))
        try data.write(contentsOf: Data(bytes))
        try data.close()

        let check = try strata(["check", dir.path])
        #expect(check.status == 1, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("problem: "), "\(check.stdout)")
        expectOneErrorLine(check, "check")
        let stat = try strata(["stat", dir.path])
        #expect(stat.status == 1, "\(stat.stdout)\(stat.stderr)")
        #expect(stat.stdout.contains("trees (3)"), "\(stat.stdout)")
        expectOneErrorLine(stat, "stat")
        // `dump` and `copy --compact` total the (clamped) counts of three trees for their progress.
        let dump = try strata(["dump", dir.path])
        #expect(dump.status == 0, "\(dump.stderr)")
        #expect(dump.stdout.contains(#"{"tree":"c"}"#) && dump.stdout.contains(Data("value-9".utf8).base64EncodedString()), "\(dump.stdout)")
        let copy = try strata(["copy", "--compact", dir.path, dir.parent + "/copied.strata"])
        #expect(copy.status == 0, "\(copy.stderr)")
    }

    // MARK: dump and load

    @Test func dumpLoadDumpIsByteIdentical() throws {
        let dir = TemporaryDirectory()
        try makeStore(at: dir.path, bulk: 12_000)
        let first = dir.parent + "/first.jsonl"
        let dump = try strata(["dump", dir.path, "-o", first])
        #expect(dump.status == 0, "\(dump.stderr)")
        let lines = try String(contentsOfFile: first, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines[0].hasPrefix("{\"strata_dump\":1,\"page_size\":"))
        let trees = lines.filter { $0.hasPrefix("{\"tree\":") }
        #expect(trees == ["books", "books#index.authors", "books#index.isbn", "books#index.shelfTitle", "books#index.title", "books#info",
                          "books#log", "bulk", "empty", "notes", "notes#index.text", "notes#info", "notes#log", "raw"].map { "{\"tree\":\"\($0)\"}" })

        // From a file, then from stdin; both reproduce the dump exactly (except the generation).
        let loaded = dir.parent + "/loaded.strata"
        let load = try strata(["load", loaded, "--input", first])
        #expect(load.status == 0, "\(load.stderr)")
        #expect(load.stdout.contains("14 trees"), "\(load.stdout)")
        #expect(load.stdout.contains("in 2 commits"), "\(load.stdout)") // over 12,000 entries, 10,000 per commit
        let piped = dir.parent + "/piped.strata"
        #expect(try strata(["load", piped], input: first).status == 0)
        for store in [loaded, piped] {
            let again = try strata(["dump", store])
            #expect(again.status == 0)
            let againLines = again.stdout.split(separator: "\n").map(String.init)
            #expect(againLines.count == lines.count)
            #expect(Array(againLines.dropFirst()) == Array(lines.dropFirst()), "dump of \(store) differs")
            #expect(try strata(["check", store]).status == 0)
        }
        // The loaded store works through the typed layer.
        let reader = try Store(at: loaded, mode: .readOnly)
        let books = try reader.datastore(BookFormat.self)
        #expect(try books.count == sampleBooks().count)
        #expect(try books.load("isbn-3", from: \.isbn)?.title == "Good Omens")

        // A non-empty store refuses a load unless told to replace; --replace replaces the trees.
        let refused = try strata(["load", loaded, "--input", first])
        #expect(refused.status == 1)
        expectOneErrorLine(refused, "load into a non-empty store")
        #expect(refused.stderr.contains("--replace"))
        #expect(try strata(["load", loaded, "--input", first, "--replace"]).status == 0)
        #expect(try strata(["dump", loaded]).stdout.split(separator: "\n").dropFirst().map(String.init) == Array(lines.dropFirst()))

        // Named trees; --decode shows JSON-coded instances and load ignores the extra field.
        let named = try strata(["dump", dir.path, "notes", "empty", "--decode"])
        #expect(named.status == 0)
        let namedLines = named.stdout.split(separator: "\n").map(String.init)
        #expect(namedLines.count == 5) // header, notes + 2 entries, empty
        #expect(namedLines[2].contains(#""json":{"id":1,"text":"line one\nline \"two\""}"#), "\(namedLines[2])")
        let decoded = dir.parent + "/decoded.jsonl"
        try named.stdout.write(toFile: decoded, atomically: true, encoding: .utf8)
        let partial = dir.parent + "/partial.strata"
        #expect(try strata(["load", partial, "-i", decoded]).status == 0)
        let partialDump = try strata(["dump", partial])
        #expect(partialDump.stdout.split(separator: "\n").dropFirst().map(String.init) == [
            "{\"tree\":\"empty\"}", "{\"tree\":\"notes\"}", namedLines[2].replacingOccurrences(of: #",\"json\":.*\}$"#, with: "}", options: .regularExpression),
            namedLines[3].replacingOccurrences(of: #",\"json\":.*\}$"#, with: "}", options: .regularExpression),
        ])

        // A bad line names its number, and the half-loaded new store is removed.
        let bad = dir.parent + "/bad.jsonl"
        try (lines[0] + "\n{\"tree\":\"x\"}\n{\"k\":\"AA==\",\"v\":\"not base64!\"}\n").write(toFile: bad, atomically: true, encoding: .utf8)
        let failed = try strata(["load", dir.parent + "/bad.strata", "--input", bad])
        #expect(failed.status == 1)
        expectOneErrorLine(failed, "bad load")
        #expect(failed.stderr.contains("line 3"), "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.parent + "/bad.strata"))
    }

    // MARK: copy

    @Test func copyWhileAWriterCommitsIsACommittedState() throws {
        let dir = TemporaryDirectory()
        let child = try ChildProcess(["crash-writer", dir.path, "2"])
        defer { child.killHard() }
        var counter = 0
        while counter < 60, let line = child.waitFor("committed") { counter = Int(line.dropFirst(10)) ?? 0 }
        #expect(counter >= 60, "the writer did not get going")

        let plain = dir.parent + "/plain.strata"
        let compact = dir.parent + "/compact.strata"
        let copy = try strata(["copy", dir.path, plain])
        #expect(copy.status == 0, "\(copy.stderr)")
        #expect(copy.stdout.contains("check clean"), "\(copy.stdout)")
        let compactCopy = try strata(["copy", dir.path, compact, "--compact"])
        #expect(compactCopy.status == 0, "\(compactCopy.stderr)")
        let writerStillRunning = child.process.isRunning
        child.killHard()
        #expect(writerStillRunning)

        for path in [plain, compact] {
            let db = try Database(path: path, mode: .readOnly)
            let report = try db.check()
            #expect(report.isClean, "\(path): \(report.problems)")
            try db.read { tx in
                let items = try tx.tree("items")
                let counter = Int(String(decoding: try #require(try tx.get("counter", in: items)).bytes, as: UTF8.self))!
                var expected: [String: [UInt8]] = ["counter": Array(String(counter).utf8)]
                for i in max(1, counter - 49)...counter { expected["item-\(i)"] = CrashLoop.item(i) }
                var actual: [String: [UInt8]] = [:]
                try tx.scan(items) { key, value in
                    actual[String(decoding: key.bytes, as: UTF8.self)] = value.bytes
                    return true
                }
                #expect(counter >= 60)
                #expect(actual == expected, "\(path) is not the state after commit \(counter)")
                if path == plain { #expect(tx.generation >= UInt64(counter)) }
            }
        }
        // The copies must not be overwritten.
        let again = try strata(["copy", dir.path, plain])
        #expect(again.status == 1)
        expectOneErrorLine(again, "copy onto an existing path")
    }

    @Test func compactCopyIsMinimalWithEqualContent() throws {
        let dir = TemporaryDirectory()
        try makeStore(at: dir.path, bulk: 20_000)
        do {
            // Free half of the bulk tree's pages.
            let db = try Database(path: dir.path)
            defer { db.close() }
            try db.write { tx in
                let bulk = try tx.tree("bulk")
                for i in stride(from: 0, to: 20_000, by: 2) { try tx.delete("key-\(i)", in: bulk) }
            }
        }
        let plain = dir.parent + "/plain.strata"
        let compact = dir.parent + "/compact.strata"
        #expect(try strata(["copy", dir.path, plain]).status == 0)
        let result = try strata(["copy", dir.path, compact, "--compact"])
        #expect(result.status == 0, "\(result.stderr)")
        func size(_ path: String) throws -> UInt64 {
            (try FileManager.default.attributesOfItem(atPath: path + "/data")[.size] as? NSNumber)?.uint64Value ?? 0
        }
        #expect(try size(compact) <= size(plain))
        #expect(try size(plain) <= size(dir.path))
        let source = try strata(["dump", dir.path]).stdout.split(separator: "\n").dropFirst().map(String.init)
        #expect(source.count > 10_000)
        for copy in [plain, compact] {
            #expect(try strata(["check", copy]).status == 0)
            #expect(try strata(["dump", copy]).stdout.split(separator: "\n").dropFirst().map(String.init) == source)
        }
        // The page copy keeps the generation; the compact copy uses fewer pages.
        let original = try Database(path: dir.path, mode: .readOnly)
        #expect(try Database(path: plain, mode: .readOnly).generation == original.generation)
        let plainReport = try Database(path: plain, mode: .readOnly).check()
        let compactReport = try Database(path: compact, mode: .readOnly).check()
        #expect(compactReport.pageCount < plainReport.pageCount, "\(compactReport.pageCount) vs \(plainReport.pageCount)")
        #expect(compactReport.freePages < plainReport.freePages)
    }

    // MARK: readers and watch

    @Test func readersShowsLiveAndDeadReaders() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in try tx.put("k", "v0", in: try tx.createTree("t")) }
        let reader = try ChildProcess(["pin-reader", dir.path])
        #expect(reader.waitFor("pinned") != nil)
        for i in 1...3 { try db.write { tx in try tx.put("k", "v\(i)", in: try tx.tree("t")) } }

        let live = try strata(["readers", dir.path])
        #expect(live.status == 0, "\(live.stderr)")
        let row = live.stdoutLines.first { $0.contains(" \(reader.pid) ") }
        #expect(row?.contains("alive") == true, "\(live.stdout)")
        #expect(row?.split(separator: " ").contains("3") == true, "lag 3 expected: \(live.stdout)")

        reader.killHard()
        let dead = try strata(["readers", dir.path])
        #expect(dead.stdoutLines.first { $0.contains(" \(reader.pid) ") }?.contains("dead") == true, "\(dead.stdout)")
        let reaped = try strata(["readers", dir.path, "--reap"])
        #expect(reaped.stdout.hasPrefix("reaped 1 dead reader slot\n"), "\(reaped.stdout)")
        #expect(!reaped.stdout.contains(" \(reader.pid) "))
    }

    @Test func watchPrintsEachCommit() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in _ = try tx.createTree("a"); _ = try tx.createTree("b") }
        let watch = try ChildProcess(["watch", dir.path, "--trees", "a", "--count", "3"], executable: "strata")
        let first = watch.nextLine()
        #expect(first?.hasPrefix("watching \(dir.path) (trees a) from generation 1") == true, "\(String(describing: first))")
        var lines: [String] = []
        for i in 1...3 {
            try db.write { tx in try tx.put("k", "\(i)", in: try tx.tree("b")) } // filtered out
            try db.write { tx in try tx.put("k", "\(i)", in: try tx.tree("a")) }
            if let line = watch.nextLine() { lines.append(line) }
        }
        #expect(watch.waitForExit() == 0)
        #expect(lines.count == 3)
        for (index, line) in lines.enumerated() {
            // The filtered-out commit to b is folded into the event when the poller missed it.
            let pattern = #"^generation "# + String(2 * index + 3) + #"  \+[12]  latency [0-9.]+ (µs|ms|s)  a$"#
            #expect(line.range(of: pattern, options: .regularExpression) != nil, "\(line)")
        }
    }

    // MARK: usage and demo

    @Test func usageErrorsExitWithTwo() throws {
        let cases: [[String]] = [[], ["nosuch"], ["stat"], ["stat", "a", "b"], ["dump", "--bogus", "x"], ["copy", "x"],
                                 ["demo", "--seconds", "x"], ["demo", "--workers", "0"], ["demo", "--durability", "sometimes"],
                                 ["watch", "x", "--count"], ["readers", "x", "--reap=yes"], ["help", "nosuch"]]
        for arguments in cases {
            let result = try strata(arguments)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stderr)")
            expectOneErrorLine(result, "\(arguments)")
            #expect(result.stdout.isEmpty)
        }
        let help = try strata(["help"])
        #expect(help.status == 0)
        for command in ["stat", "check", "dump", "load", "copy", "readers", "watch", "demo"] {
            #expect(help.stdout.contains("\n  \(command) "), "\(command) missing from help")
            let commandHelp = try strata([command, "--help"])
            #expect(commandHelp.status == 0)
            #expect(commandHelp.stdout.hasPrefix("usage: strata \(command)"))
            #expect(try strata([command, "-h"]).stdout == commandHelp.stdout)
        }
        let missing = try strata(["stat", "/nonexistent/store.strata"])
        #expect(missing.status == 1)
        expectOneErrorLine(missing, "missing store")
        #expect(missing.stderr.contains("does not exist"))
    }

    @Test func demoRunsAndSummarizes() throws {
        let dir = TemporaryDirectory()
        let result = try strata(["demo", "--seconds", "1", "--workers", "2", "--path", dir.path])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        for expected in ["1 writer and 2 workers", "commits/s", "worker 1", "worker 2", "reads/s", "notify", "p50", "p99", "file",
                         "reuse", "check     clean", "removed"] {
            #expect(result.stdout.contains(expected), "missing '\(expected)' in:\n\(result.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path))
    }
}
