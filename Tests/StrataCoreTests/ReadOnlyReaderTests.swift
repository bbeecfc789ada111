import Foundation
import Testing
@testable import StrataCore

/// Readers that may read the store's files but not write them: another user, an extension, a
/// read-only directory. They run in a child that drops to uid 65534 (root ignores permission
/// bits), so these tests need root; as another user they are skipped with a note.
@Suite(.serialized) struct ReadOnlyReaderTests {
    static let keys = 300

    /// Writes one round: every key of tree "t" gets "value ROUND i" (all pages are rewritten,
    /// so the pages of earlier rounds are freed and reused by later ones).
    static func writeRound(_ round: Int, to db: Database) throws {
        try db.write { tx in
            let t = try tx.openOrCreateTree("t")
            for i in 0..<keys { try tx.put("key \(i)", "value \(round) \(i) " + String(repeating: "x", count: 40), in: t) }
        }
    }

    func makeStore(fileMode: mode_t = 0o644, rounds: Int = 3) throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.fileMode = fileMode
        let db = try Database(path: dir.path, options: options)
        for round in 1...rounds { try ReadOnlyReaderTests.writeRound(round, to: db) }
        return dir
    }

    /// A reader child that has opened the store at generation 3 (nil when not root).
    func reader(_ dir: TemporaryDirectory) throws -> ChildProcess? {
        guard geteuid() == 0 else {
            print("[readOnlyReaders] skipped: dropping to uid 65534 needs root")
            return nil
        }
        let child = try ChildProcess(["read-only-reader", dir.path])
        #expect(child.nextLine(timeout: 30) == "opened 3")
        return child
    }

    /// A store without a lock file in a directory nobody but root may write.
    func makeLocklessStore() throws -> TemporaryDirectory {
        let dir = try makeStore()
        #expect(unlink(dir.path + "/lock") == 0)
        #expect(chmod(dir.path, 0o555) == 0)
        return dir
    }

    func dataSize(_ dir: TemporaryDirectory) throws -> UInt64 {
        try #require(FileManager.default.attributesOfItem(atPath: dir.path + "/data")[.size] as? UInt64)
    }

    func ask(_ child: ChildProcess, _ command: String) -> String {
        child.send(command)
        return child.nextLine(timeout: 40) ?? "no answer"
    }

    func consistent(_ round: Int, generation: UInt64? = nil) -> String {
        "gen=\(generation.map(String.init) ?? "\(round)") round=\(round) count=\(ReadOnlyReaderTests.keys)"
    }

    @Test func readOnlyDirectoryAndFiles() throws {
        let dir = try makeStore()
        for file in ["data", "lock"] { #expect(chmod(dir.path + "/" + file, 0o444) == 0) }
        #expect(chmod(dir.path, 0o555) == 0)
        defer { chmod(dir.path, 0o700) }
        guard let child = try reader(dir) else { return }
        #expect(ask(child, "read") == "read " + consistent(3))
        #expect(ask(child, "snap") == "snap " + consistent(3))
        #expect(ask(child, "hold") == "held " + consistent(3))
        #expect(ask(child, "check") == "check " + consistent(3))
        child.send("quit")
        #expect(child.waitForExit() == 0)
    }

    @Test func noLockFileInAReadOnlyDirectory() throws {
        let dir = try makeLocklessStore()
        defer { chmod(dir.path, 0o700) }
        guard let child = try reader(dir) else { return }
        #expect(ask(child, "read") == "read " + consistent(3))
        #expect(ask(child, "snap") == "snap " + consistent(3))
        child.send("quit")
        #expect(child.waitForExit() == 0)
        #expect(access(dir.path + "/lock", F_OK) != 0, "a read-only reader created no lock file")
    }

    /// The main case: a writer (another user) commits while the read-only reader follows it and
    /// holds an old snapshot. The writer rewrites every page many times over; the held snapshot
    /// must still read exactly what it read at first (its pages were not reused).
    @Test func liveWriterAndReaderWithoutWritePermission() throws {
        let dir = try makeStore(fileMode: 0o644)
        let writer = try Database(path: dir.path)
        guard let child = try reader(dir) else { return }
        #expect(ask(child, "hold") == "held " + consistent(3))
        #expect(writer.oldestReaderSnapshot == 3, "the writer sees the read-only reader's pin")
        for round in 4...40 { try ReadOnlyReaderTests.writeRound(round, to: writer) }
        #expect(ask(child, "wait 40") == "seen " + consistent(40))
        #expect(ask(child, "check") == "check " + consistent(3))
        #expect(ask(child, "end") == "ended")
        #expect(writer.oldestReaderSnapshot == nil, "the pin went with the snapshot")
        // A withSnapshot call pins its generation for the call only (a SnapshotReader without a slot).
        #expect(ask(child, "snap") == "snap " + consistent(40))
        #expect(writer.oldestReaderSnapshot == nil, "the withSnapshot pin went with its call")
        let sizeBefore = try dataSize(dir)
        for round in 41...60 { try ReadOnlyReaderTests.writeRound(round, to: writer) }
        #expect(ask(child, "wait 60") == "seen " + consistent(60))
        // Space is reused again once the old snapshot is gone.
        #expect(try dataSize(dir) <= sizeBefore, "the file did not grow once the pin was released")
        child.send("quit")
        #expect(child.waitForExit() == 0)
    }

    /// Snapshots claimed while the writer commits as fast as it can: every one consistent (the
    /// claim re-checks the generation after pinning, and the writer honours the pin).
    @Test func readOnlySnapshotsStayConsistentUnderAFastWriter() throws {
        let dir = try makeStore()
        var options = DatabaseOptions()
        options.durability = .none
        let writer = try Database(path: dir.path, options: options)
        guard let child = try reader(dir) else { return }
        child.send("churn 3")
        var round = 4
        let deadline = Date().addingTimeInterval(3.2)
        while Date() < deadline {
            try ReadOnlyReaderTests.writeRound(round, to: writer)
            round += 1
        }
        let answer = child.nextLine(timeout: 30) ?? "no answer"
        print("[readOnlyReaders] \(round - 4) commits while a read-only reader churned: \(answer)")
        #expect(answer.hasPrefix("churned") && answer.contains(" mixed=0 failures=0"), "\(answer)")
        child.send("quit")
        #expect(child.waitForExit() == 0)
    }

    /// A killed read-only reader leaves no pin behind: the kernel drops its locks.
    @Test func killedReadOnlyReaderReleasesItsPin() throws {
        let dir = try makeStore(fileMode: 0o644)
        let writer = try Database(path: dir.path)
        guard let child = try reader(dir) else { return }
        #expect(ask(child, "hold") == "held " + consistent(3))
        try ReadOnlyReaderTests.writeRound(4, to: writer)
        #expect(writer.oldestReaderSnapshot == 3)
        let pinned = try writer.readerReport().filter { $0.slot < 0 }
        #expect(pinned.map(\.snapshot) == [3], "the report lists the read-only reader's pin")
        child.killHard()
        #expect(writer.oldestReaderSnapshot == nil)
    }

    /// Second line of defence. Without a lock file nothing can register a snapshot; if a writer
    /// appears anyway (root ignores the directory's mode) and reuses the pages of the reader's
    /// snapshot while it is idle, the reader must see its snapshot intact or a typed error, never
    /// other data. (A page rewritten in the middle of a read is not detected: the pin is the
    /// protection, this check only a detector.)
    @Test func unprotectedSnapshotReusedByAnUnexpectedWriterIsDetected() throws {
        let dir = try makeLocklessStore()
        defer { chmod(dir.path, 0o700) }
        guard let child = try reader(dir) else { return }
        #expect(ask(child, "hold") == "held " + consistent(3))
        let writer = try Database(path: dir.path)
        for round in 4...40 { try ReadOnlyReaderTests.writeRound(round, to: writer) }
        let answer = ask(child, "check")
        let intact = answer == "check " + consistent(3)
        let detected = answer.hasPrefix("refused ") && answer.contains("was rewritten by a later commit")
        #expect(intact || detected, "\(answer)")
        print("[readOnlyReaders] snapshot of a reader without a lock file, after 37 commits: \(answer)")
        child.send("quit")
        #expect(child.waitForExit() == 0)
    }


    /// The writer finds the oldest pinned generation among open-file-description read locks,
    /// whatever order the kernel lists them in.
    @Test func writerFindsTheOldestPin() throws {
        let dir = try makeStore()
        let writer = try Database(path: dir.path)
        let pinner = try PosixFile(path: dir.path + "/lock", flags: O_RDONLY)
        let pins = SnapshotPins(file: pinner)
        #expect(try SnapshotPins.oldestPin(in: writer.lockFile.file, below: 100) == nil)
        for generation: UInt64 in [9, 5, 70, 6] { try pins.pin(generation) }
        try pins.pin(5)
        #expect(try SnapshotPins.oldestPin(in: writer.lockFile.file, below: 100) == 5)
        #expect(try SnapshotPins.oldestPin(in: writer.lockFile.file, below: 5) == nil)
        #expect(try SnapshotPins.pinnedGenerations(in: writer.lockFile.file, below: 100) == [5, 6, 9, 70])
        pins.unpin(5)
        #expect(try SnapshotPins.oldestPin(in: writer.lockFile.file, below: 100) == 5, "pinned twice, released once")
        pins.unpin(5)
        #expect(try SnapshotPins.oldestPin(in: writer.lockFile.file, below: 100) == 6)
        pins.unpin(6)
        #expect(try SnapshotPins.oldestPin(in: writer.lockFile.file, below: 100) == 9)
    }
}
