import Foundation
import Testing
@testable import StrataCore

/// Files around the store that are not what the engine left there: a foreign or damaged lock file,
/// files without the permissions a handle needs, symbolic links, a directory where the data file
/// should be. Each gives a typed error naming the file, or is repaired when that is safe.
@Suite(.serialized) struct HostileFileTests {
    func makeStore(fileMode: mode_t = 0o600) throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.fileMode = fileMode
        let db = try Database(path: dir.path, options: options)
        for round in 1...3 {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                for i in 0..<300 { try tx.put("key \(i)", "value \(round) \(i)", in: t) }
            }
        }
        return dir
    }

    func overwrite(_ path: String, with bytes: [UInt8], at offset: UInt64 = 0) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: offset)
        handle.write(Data(bytes))
        try handle.close()
    }

    func garbage(_ count: Int, _ random: inout SeededGenerator) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    @Test func garbageLockFileIsResetWhenNobodyHasTheStoreOpen() throws {
        let seed = testSeed("garbageLock")
        var random = SeededGenerator(seed: seed)
        let lengths = [0, 3, 31, 32, 4095, 4096 + 64 * 256, 100_000]
        for length in lengths {
            let dir = try makeStore()
            let lock = dir.path + "/lock"
            try Data(garbage(length, &random)).write(to: URL(fileURLWithPath: lock))
            let db = try Database(path: dir.path)
            #expect(db.generation == 3, "garbage of \(length) bytes")
            #expect(try db.read { try $0.string("key 7", in: $0.tree("t")) } == "value 3 7")
            try db.write { tx in try tx.put("key 7", "after reset", in: try tx.tree("t")) }
            #expect(db.generation == 4)
            let header = try #require(FileManager.default.contents(atPath: lock))
            #expect(header.prefix(8) == Data("STRATALK".utf8), "the lock file was rewritten")
            // A reader joins the repaired lock file.
            let reader = try Database(path: dir.path, mode: .readOnly)
            #expect(reader.generation == 4)
        }
        print("[hostileFiles] \(lengths.count) garbage lock files reset while the store was closed")
    }

    @Test func garbageLockFileWhileAnotherHandleHasTheStoreOpen() throws {
        let dir = try makeStore()
        let lock = dir.path + "/lock"
        let holder = try Database(path: dir.path, mode: .readOnly)
        try overwrite(lock, with: Array("this is not a lock file at all!!".utf8))
        #expect(throws: StrataError.notAStore(path: lock, reason: "the lock file was not written by Strata")) {
            _ = try Database(path: dir.path, mode: .readOnly)
        }
        #expect(throws: StrataError.notAStore(path: lock, reason: "the lock file was not written by Strata")) {
            _ = try Database(path: dir.path)
        }
        // The handle that had it open still reads its generation (the counter is past the header).
        #expect(try holder.read { try $0.string("key 1", in: $0.tree("t")) } == "value 3 1")
        holder.close()
        _ = consume holder
        // Nobody has it open any more: the next opener resets it.
        let db = try Database(path: dir.path)
        #expect(db.generation == 3)
    }

    @Test func lockFileOfAnotherStoreWhileOpen() throws {
        let dir = try makeStore()
        let other = try makeStore()
        let holder = try Database(path: dir.path, mode: .readOnly)
        // A valid Strata lock header, but recording another data file's inode.
        let foreign = try #require(FileManager.default.contents(atPath: other.path + "/lock"))
        try overwrite(dir.path + "/lock", with: Array(foreign.prefix(32)))
        #expect {
            _ = try Database(path: dir.path, mode: .readOnly)
        } throws: { error in
            guard case StrataError.notAStore(let path, let reason) = error else { return false }
            return path == dir.path + "/lock" && reason.contains("does not match this data file")
        }
        _ = holder
    }

    /// The writer lock lives in the lock file. If someone deletes the lock file while a writer has
    /// the store open, a second writer must still be refused: two writers would each commit over
    /// the other's pages.
    @Test func deletedLockFileDoesNotAdmitASecondWriter() throws {
        let dir = try makeStore()
        let first = try Database(path: dir.path)
        #expect(unlink(dir.path + "/lock") == 0)
        var second: Database?
        #expect {
            second = try Database(path: dir.path)
        } throws: { error in
            error as? StrataError == .lockFileReplaced(path: dir.path)
        }
        if let second {
            // Show what two writers do to the store.
            try first.write { tx in try tx.put("key 1", "first writer", in: try tx.tree("t")) }
            try second.write { tx in try tx.put("key 2", "second writer", in: try tx.tree("t")) }
            let reopened = try Database(path: dir.path, mode: .readOnly)
            let values = try reopened.read { tx in (try tx.string("key 1", in: tx.tree("t")), try tx.string("key 2", in: tx.tree("t"))) }
            print("[hostileFiles] two writers after the lock file was deleted: generation \(reopened.generation), key 1 = \(values.0 ?? "nil"), key 2 = \(values.1 ?? "nil") (one writer's commit is lost)")
        }
    }

    /// A reader that finds no lock file while a writer is running (its lock file was deleted
    /// under it) would start a fresh reader table the writer never reads: its snapshot would not
    /// hold back page reuse, and the generation it follows would never move. The writer still
    /// holds the data file's writer lock, so the open is refused with a typed error instead, for
    /// a read-write-capable reader and for one without write permission alike.
    @Test func readersRefuseALockFileDeletedUnderARunningWriter() throws {
        let dir = try makeStore(fileMode: 0o644)
        try waitUntilNobodyHasTheStoreOpen(dir.path)
        let writer = try Database(path: dir.path)
        defer { writer.close() }
        #expect(unlink(dir.path + "/lock") == 0)
        #expect(throws: StrataError.lockFileReplaced(path: dir.path)) { _ = try Database(path: dir.path, mode: .readOnly) }
        if geteuid() == 0 {
            #expect(try openWithoutPrivileges(dir.path, mode: "ro") == "refused \(StrataError.lockFileReplaced(path: dir.path))")
        }
        // Once the writer is gone, the store opens as usual.
        writer.close()
        try waitUntilNobodyHasTheStoreOpen(dir.path)
        #expect(try Database(path: dir.path, mode: .readOnly).generation == 3)
    }

    /// Root ignores permission bits, so as root the opening runs in a child that drops to uid 65534.
    func openWithoutPrivileges(_ path: String, mode: String) throws -> String {
        let child = try ChildProcess(["open-as-nobody", path, mode])
        let line = child.nextLine(timeout: 30) ?? "no answer"
        child.waitForExit()
        return line
    }

    @Test func readOnlyDataFileOpenedReadWriteNamesThePath() throws {
        let dir = try makeStore(fileMode: 0o644)
        let data = dir.path + "/data"
        if geteuid() == 0 {
            // 0644 files of root: another user may read them but not write.
            let answer = try openWithoutPrivileges(dir.path, mode: "rw")
            #expect(answer == "refused \(StrataError.io(operation: "open", path: data, errno: EACCES))")
            // A reader needs no write permission (it pins its snapshot with a read lock).
            let reader = try openWithoutPrivileges(dir.path, mode: "ro")
            #expect(reader == "opened")
            print("[hostileFiles] without write permission: read-write open: \(answer); read-only open: \(reader)")
        } else {
            #expect(chmod(data, 0o444) == 0)
            #expect(throws: StrataError.io(operation: "open", path: data, errno: EACCES)) { _ = try Database(path: dir.path) }
            #expect(try Database(path: dir.path, mode: .readOnly).generation == 3)
        }
    }

    /// A lock file created for an existing store (deleted by a clean-up, or never copied with a
    /// backup) takes the data file's modes, not the opener's `fileMode`: a store shared 0644 must
    /// stay readable by the users it was shared with, whoever opens it first. Before the fix a
    /// default-options open created it 0600, and every other user's read-only open failed EACCES.
    @Test func aRecreatedLockFileTakesTheDataFilesModes() throws {
        let dir = try makeStore(fileMode: 0o644)
        try waitUntilNobodyHasTheStoreOpen(dir.path)
        #expect(unlink(dir.path + "/lock") == 0)
        _ = try Database(path: dir.path, mode: .readOnly).generation // default options: fileMode 0600
        var data = stat(), lock = stat()
        #expect(stat(dir.path + "/data", &data) == 0 && stat(dir.path + "/lock", &lock) == 0)
        #expect(lock.st_mode & 0o777 == data.st_mode & 0o666, "lock \(String(lock.st_mode & 0o777, radix: 8)), data \(String(data.st_mode & 0o777, radix: 8))")
        if geteuid() == 0 {
            try waitUntilNobodyHasTheStoreOpen(dir.path)
            #expect(try openWithoutPrivileges(dir.path, mode: "ro") == "opened")
        }
    }

    @Test func symbolicLinksAndDirectoriesInPlaceOfStoreFiles() throws {
        let real = try makeStore()
        // The store directory itself as a symbolic link: refused (a link can be retargeted under a
        // running writer).
        let link = real.parent + "/link.strata"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real.path)
        #expect(throws: StrataError.notAStore(path: link, reason: "it is a symbolic link; open the directory it points to")) {
            _ = try Database(path: link)
        }
        #expect(throws: StrataError.notAStore(path: link, reason: "it is a symbolic link; open the directory it points to")) {
            _ = try Database(path: link, mode: .readOnly)
        }
        // A directory where the data file should be.
        let odd = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: odd.path + "/data", withIntermediateDirectories: true)
        #expect {
            _ = try Database(path: odd.path)
        } throws: { error in
            guard case StrataError.io(_, let path, _) = error else { return false }
            return path == odd.path + "/data"
        }
        // A directory where the lock file should be.
        let lockless = try makeStore()
        #expect(unlink(lockless.path + "/lock") == 0)
        try FileManager.default.createDirectory(atPath: lockless.path + "/lock", withIntermediateDirectories: true)
        #expect {
            _ = try Database(path: lockless.path, mode: .readOnly)
        } throws: { error in
            guard case StrataError.io(_, let path, _) = error else { return false }
            return path == lockless.path + "/lock"
        }
    }
}
