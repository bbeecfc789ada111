import Foundation
import Glibc
import Testing
@_spi(Testing) @testable import StrataCore

/// `Database.load` tells a bad dump from a failing store: a line it cannot load is
/// `DumpError.invalidLine` naming the line; a store that cannot take the write (a full disk, an
/// I/O error) throws the store's own error, so a caller does not blame the input for `ENOSPC`.
@Suite struct LoadFailureTests {
    /// A dump of `entries` entries in one tree, in a file; returns its path.
    func dumpFile(in dir: TemporaryDirectory, entries: Int, key: (Int) -> [UInt8]) throws -> String {
        let source = try Database(path: dir.parent + "/source.strata")
        defer { source.close() }
        try source.write { tx in
            let tree = try tx.createTree("t")
            for i in 0..<entries { try tx.put(key(i), "value \(i)", in: tree) }
        }
        var text: [UInt8] = []
        try source.dump { text.append(contentsOf: $0) }
        let path = dir.parent + "/dump.jsonl"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text)))
        return path
    }

    func load(_ dumpPath: String, into db: Database, batch: Int) throws {
        let descriptor = open(dumpPath, O_RDONLY)
        defer { close(descriptor) }
        try db.load(try DumpReader(fileDescriptor: descriptor, name: dumpPath), batch: batch)
    }

    @Test func aFullDiskDuringALoadIsTheStoresErrorNotABadLine() throws {
        let dir = TemporaryDirectory()
        let dumpPath = try dumpFile(in: dir, entries: 50) { Array("key \($0)".utf8) }
        let box = IOBox<FaultyIO>()
        var options = DatabaseOptions()
        box.install(in: &options) { FaultyIO(inner: $0) }
        let db = try Database(path: dir.path, options: options)
        defer { db.close() }
        box.io!.armed = (.metaSync, .enospc, 1)
        #expect(throws: StrataError.diskFull(path: dir.path + "/data")) { try load(dumpPath, into: db, batch: 20) }
    }

    @Test func aKeyTooLargeForThisStoreIsABadLine() throws {
        let dir = TemporaryDirectory()
        // 3,000-byte keys fit a 32 KiB-page source but not a 4 KiB-page target.
        let dumpPath: String
        do {
            let source = dir.parent + "/wide.strata"
            var wide = DatabaseOptions()
            wide.pageSize = 32_768
            let db = try Database(path: source, options: wide)
            try db.write { tx in try tx.put([UInt8](repeating: 7, count: 3_000), "v", in: try tx.createTree("t")) }
            var text: [UInt8] = []
            try db.dump { text.append(contentsOf: $0) }
            db.close()
            dumpPath = dir.parent + "/wide.jsonl"
            #expect(FileManager.default.createFile(atPath: dumpPath, contents: Data(text)))
        }
        var options = DatabaseOptions()
        options.pageSize = 4096
        let db = try Database(path: dir.path, options: options)
        defer { db.close() }
        #expect {
            try load(dumpPath, into: db, batch: 20)
        } throws: { error in
            guard case DumpError.invalidLine(_, let line, let reason) = error else { return false }
            return line == 3 && reason.contains("key of 3000 bytes")
        }
    }
}
