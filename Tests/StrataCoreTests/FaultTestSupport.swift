import Foundation
import Testing
@_spi(Testing) @testable import StrataCore
import StrataTestFixtures

/// A bound for a randomized or long-running test: the environment variable if set, else `standard`
/// (what `swift test` runs). See Tests/StrataCoreTests/README.md, "Fault tolerance and hostile input".
func environmentCount(_ name: String, default standard: Int) -> Int {
    ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? standard
}

func environmentSeconds(_ name: String, default standard: Double) -> Double {
    ProcessInfo.processInfo.environment[name].flatMap(Double.init) ?? standard
}

/// Holds the data-file IO a test store was opened with, so the test can steer it.
final class IOBox<IO: DataFileIO>: @unchecked Sendable {
    var io: IO?

    /// Makes `options` wrap the store's data file in the IO `make` builds, and keeps it here.
    func install(in options: inout DatabaseOptions, _ make: @escaping @Sendable (any DataFileIO) -> IO) {
        options.dataFileIO = { inner in
            let io = make(inner)
            self.io = io
            return io
        }
    }
}

/// Every tree of a snapshot: name -> key -> value.
typealias StoreContent = [String: [[UInt8]: [UInt8]]]

func content(of transaction: Transaction, skipping skipped: Set<String> = []) throws -> StoreContent {
    var result: StoreContent = [:]
    for name in try transaction.treeNames() where !skipped.contains(name) {
        var entries: [[UInt8]: [UInt8]] = [:]
        try transaction.scan(try transaction.tree(name)) { key, value in
            entries[key.bytes] = value.bytes
            return true
        }
        result[name] = entries
    }
    return result
}

/// The content commit `counter` of the crash-loop writers (`crash-writer`, `kill-writer`) leaves.
func crashLoopContent(counter: Int) -> StoreContent {
    guard counter > 0 else { return [:] }
    var items: [[UInt8]: [UInt8]] = [Array("counter".utf8): Array(String(counter).utf8)]
    for i in max(1, counter - 49)...counter { items[Array("item-\(i)".utf8)] = CrashLoop.item(i) }
    return ["items": items]
}

/// Opens a crash-loop store read-only, requires a clean check and content that is exactly the state
/// after some commit (the "ballast" tree aside); returns that commit's counter.
func verifyCrashLoopStore(_ path: String, context: String) throws -> Int {
    let db = try Database(path: path, mode: .readOnly)
    let report = try db.check()
    #expect(report.isClean, "\(context): \(report.problems)")
    return try db.read { tx in
        let counter = try tx.treeIfPresent("items").flatMap { try tx.get("counter", in: $0) }
            .map { Int(String(decoding: $0.bytes, as: UTF8.self)) ?? -1 } ?? 0
        // `kill-writer ... grow` adds the "ballast" tree only to make the file grow.
        let actual = try content(of: tx, skipping: ["ballast"])
        #expect(actual == crashLoopContent(counter: counter), "\(context): content is not the state after commit \(counter)")
        return counter
    }
}

/// The acknowledged commits a crash-loop child printed ("committed N").
func acknowledgedCounter(_ child: ChildProcess) -> Int? {
    child.allLines.compactMap { $0.hasPrefix("committed ") ? Int($0.dropFirst(10)) : nil }.max()
}

/// Overwrites `bytes` at `offset` of the file at `path` (damage a store on purpose).
func patchFile(_ path: String, at offset: UInt64, _ bytes: [UInt8]) throws {
    let handle = try #require(FileHandle(forUpdatingAtPath: path))
    try handle.seek(toOffset: offset)
    handle.write(Data(bytes))
    try handle.close()
}

/// Up to `count` bytes at `offset` of the file at `path`.
func readFile(_ path: String, at offset: UInt64, count: Int) throws -> [UInt8] {
    let handle = try #require(FileHandle(forReadingAtPath: path))
    try handle.seek(toOffset: offset)
    return Array(handle.readData(ofLength: count))
}

/// Waits (up to 5 s) until no open file description holds the store's lock file, so the next
/// handle opens it alone and verifies the newest commit's pages. A handle's descriptors are
/// closed when it goes, but a child that another test's thread is spawning at that instant holds
/// copies of them until it execs (O_CLOEXEC acts only then), and with them the lock file's
/// open-handles lock: a test that damages a store on purpose and expects the first opener to
/// notice must wait that out.
func waitUntilNobodyHasTheStoreOpen(_ storePath: String) throws {
    let file = try PosixFile(path: storePath + "/lock", flags: O_RDWR)
    defer { file.close() }
    let deadline = Date().addingTimeInterval(5)
    while try file.isLockedByOthers(offset: LockFile.openHandlesByte), Date() < deadline { usleep(1000) }
}
