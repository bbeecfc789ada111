import Foundation
import Glibc
import StrataCore

/// `strata copy PATH DEST [--compact]`: an online backup of one read snapshot.
enum CopyCommand: Command {
    static let spec = CommandSpec(
        name: "copy", synopsis: "PATH DEST",
        summary: "Back up a store from one consistent snapshot, even while a writer commits.",
        discussion: """
            Holds one read transaction for the whole copy: the writer keeps committing but cannot
            reuse the pages that snapshot reaches. Without --compact, the data file's pages up to the
            snapshot's high-water mark are copied as they are and the snapshot's meta page is kept
            (the other meta slot is cleared), so DEST opens at exactly the snapshot's generation.
            With --compact, DEST is a new store that receives every tree entry by entry in key order:
            no free pages, a minimal file, a new generation count. DEST must not exist. The copy is
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
        let started = monotonicNanoseconds()
        let copied: (generation: UInt64, pages: UInt64)
        do {
            copied = arguments.flag("compact") ? try compactCopy(source, to: destination) : try pageCopy(source, to: destination)
        } catch {
            try? FileManager.default.removeItem(atPath: destination)
            throw error
        }
        let elapsed = Double(monotonicNanoseconds() - started) / 1e9

        // Verify what was written, as a reader of DEST would see it.
        let copy = try Database(path: destination, mode: .readOnly)
        defer { copy.close() }
        let report = try copy.check()
        let fileSize = try StoreFiles.dataFileSize(of: destination)
        let sourceBytes = copied.pages * UInt64(source.pageSize)
        var text = "\(arguments.flag("compact") ? "compacted" : "copied") generation \(copied.generation) of \(path) "
        text += "(\(plural(copied.pages, "page")), \(byteCount(sourceBytes))) into \(destination) in \(duration(elapsed))\n"
        text += "\(destination): generation \(report.generation), file \(byteCount(fileSize)), \(plural(report.pageCount, "page")) "
        text += "(\(grouped(report.treePages)) in trees, \(grouped(report.freePages)) free), \(plural(report.trees.count, "tree")), "
        text += report.isClean ? "check clean\n" : "check found \(plural(report.problems.count, "problem"))\n"
        Console.write(text)
        guard report.isClean else {
            throw ToolError.failure("the copy at \(destination) does not check clean: \(report.problems[0]); keep the source and report this")
        }
    }

    // MARK: Page copy

    /// Copies pages [0, pageCount) of one snapshot and makes its meta the only valid one.
    private static func pageCopy(_ db: Database, to destination: String) throws -> (generation: UInt64, pages: UInt64) {
        let pageSize = db.pageSize
        let input = try RawFile(path: StoreFiles.dataPath(of: db.path), flags: O_RDONLY)
        for attempt in 1...8 {
            let transaction = try db.beginRead()
            defer { transaction.end() }
            let generation = transaction.generation
            let pageCount = transaction.pageCount
            // Commit G writes meta slot G % 2, so slot G % 2 holds this snapshot's meta until commit
            // G + 2 rewrites it: read it at once, and verify it below (and by opening the copy).
            let slot = generation % 2
            let meta = try input.read(count: pageSize, at: slot * UInt64(pageSize))
            guard meta.count == pageSize, metaField(meta, at: 0) == slot, metaField(meta, at: 48) == generation else {
                usleep(UInt32(attempt) * 1000)
                continue
            }
            try writeCopy(from: input, pageCount: pageCount, pageSize: pageSize, meta: meta, slot: slot, to: destination)
            transaction.end()
            // The meta may have been torn by a concurrent commit G + 2 while it was read: only a copy
            // that opens at exactly G (its checksum validated by the engine) is kept.
            if (try? Database(path: destination, mode: .readOnly).generation) == generation {
                return (generation, pageCount)
            }
            try? FileManager.default.removeItem(atPath: destination)
        }
        throw ToolError.failure("could not read a stable meta page of \(db.path): the writer commits too fast; retry, or use --compact")
    }

    private static func writeCopy(from input: RawFile, pageCount: UInt64, pageSize: Int, meta: [UInt8], slot: UInt64,
                                  to destination: String) throws {
        var info = stat()
        let mode: mode_t = stat(input.path, &info) == 0 ? info.st_mode & 0o777 : 0o600
        guard mkdir(destination, mode | ((mode & 0o444) >> 2)) == 0 else {
            throw StrataError.io(operation: "mkdir", path: destination, errno: errno)
        }
        let output = try RawFile(path: StoreFiles.dataPath(of: destination), flags: O_WRONLY | O_CREAT | O_EXCL, mode: mode)
        let progress = ProgressBar("copy")
        defer { progress.finish() }
        let chunkPages = max(1, (4 << 20) / pageSize)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkPages * pageSize, alignment: 4096)
        defer { buffer.deallocate() }
        // Meta pages: the snapshot's in its slot, the other slot zeroed (it would name another
        // generation, newer than the snapshot, whose pages were not copied).
        try meta.withUnsafeBytes { try output.write($0, at: slot * UInt64(pageSize)) }
        let zero = [UInt8](repeating: 0, count: pageSize)
        try zero.withUnsafeBytes { try output.write($0, at: (1 - slot) * UInt64(pageSize)) }
        var page: UInt64 = 2
        while page < pageCount {
            let count = min(UInt64(chunkPages), pageCount - page)
            let bytes = Int(count) * pageSize
            let chunk = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes])
            let got = try input.read(into: chunk, at: page * UInt64(pageSize))
            guard got == bytes else {
                throw ToolError.failure("\(input.path) ended at byte \(page * UInt64(pageSize) + UInt64(got)), before page \(pageCount) of the snapshot")
            }
            try output.write(UnsafeRawBufferPointer(chunk), at: page * UInt64(pageSize))
            page += count
            progress.update(page, of: pageCount, detail: byteCount(page * UInt64(pageSize)))
        }
        try output.truncate(to: pageCount * UInt64(pageSize))
        try output.sync()
        output.close()
        syncDirectory(destination)
    }

    private static func metaField(_ meta: [UInt8], at offset: Int) -> UInt64 {
        meta.withUnsafeBytes { loadLittleEndian(UInt64.self, from: $0, at: offset) }
    }

    // MARK: Compacting copy

    /// Rebuilds every tree of one snapshot into a new store, entry by entry in key order.
    private static func compactCopy(_ db: Database, to destination: String) throws -> (generation: UInt64, pages: UInt64) {
        let transaction = try db.beginRead()
        defer { transaction.end() }
        var options = DatabaseOptions()
        options.pageSize = db.pageSize
        var info = stat()
        if stat(StoreFiles.dataPath(of: db.path), &info) == 0 { options.fileMode = info.st_mode & 0o777 }
        let names = try transaction.treeNames()
        let total = try names.reduce(UInt64(0)) { $0 + UInt64(try transaction.count(transaction.tree($1))) }
        let progress = ProgressBar("copy --compact")
        defer { progress.finish() }
        do {
            let target = try Database(path: destination, mode: .readWrite, options: options)
            defer { target.close() }
            var write = try target.beginWrite()
            defer { write.abort() }
            var pending = 0
            var done: UInt64 = 0
            for name in names {
                var tree = try write.createTree(name)
                try transaction.scan(try transaction.tree(name)) { key, value in
                    try write.put(key, value, in: tree)
                    pending += 1
                    done += 1
                    if pending >= 10_000 {
                        try write.commit()
                        write = try target.beginWrite()
                        tree = try write.tree(name)
                        pending = 0
                        progress.update(done, of: total, detail: "\(grouped(done)) entries")
                    }
                    return true
                }
            }
            try write.commit()
        }
        // The file grows in steps; trim it to the pages in use (no handle has it open now).
        let pageCount = try Database(path: destination, mode: .readOnly).read { $0.pageCount }
        let output = try RawFile(path: StoreFiles.dataPath(of: destination), flags: O_WRONLY)
        try output.truncate(to: pageCount * UInt64(db.pageSize))
        try output.sync()
        output.close()
        syncDirectory(destination)
        return (transaction.generation, transaction.pageCount)
    }

    private static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }
}
