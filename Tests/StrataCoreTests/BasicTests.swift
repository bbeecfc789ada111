import Foundation
import Testing
@testable import StrataCore

@Suite struct BasicTests {
    @Test func putGetDeleteAndReopen() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(path: dir.path)
            try db.write { tx throws in
                let books = try tx.createTree("books")
                try tx.put("b", "Beta", in: books)
                try tx.put("a", "Alpha", in: books)
                try tx.put("c", "Gamma", in: books)
                #expect(try tx.string("a", in: books) == "Alpha")
            }
            try db.write { tx throws in
                let books = try tx.tree("books")
                #expect(try tx.delete("b", in: books))
                #expect(try !tx.delete("zzz", in: books))
                #expect(try tx.put("c", "Gamma 2", in: books))
            }
            #expect(db.generation == 2)
            db.close()
        }
        let db = try Database(path: dir.path, mode: .readOnly)
        try db.read { tx throws in
            let books = try tx.tree("books")
            #expect(try tx.string("a", in: books) == "Alpha")
            #expect(try tx.string("b", in: books) == nil)
            #expect(try tx.string("c", in: books) == "Gamma 2")
            #expect(try tx.count(books) == 2)
            #expect(try tx.treeNames() == ["books"])
        }
    }

    @Test func thrownErrorAbortsEverything() throws {
        struct Boom: Error {}
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try tx.put("k", "v1", in: try tx.createTree("t")) }
        #expect(throws: Boom.self) {
            try db.write { tx throws in
                try tx.put("k", "v2", in: try tx.tree("t"))
                try tx.put("other", "x", in: try tx.createTree("u"))
                throw Boom()
            }
        }
        try db.read { tx throws in
            #expect(try tx.string("k", in: tx.tree("t")) == "v1")
            #expect(try tx.treeIfPresent("u") == nil)
        }
        #expect(db.generation == 1)
    }

    @Test func insertModeRefusesExistingKey() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in
            let t = try tx.createTree("t")
            try tx.put("k", "v", in: t, mode: .insert)
            #expect(throws: StrataError.keyExists) { try tx.put("k", "w", in: t, mode: .insert) }
            #expect(try tx.string("k", in: t) == "v")
        }
    }

    @Test func keyAndValueLimits() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let maxKey = PageLayout.maximumKeySize(pageSize: db.pageSize)
        #expect(maxKey >= 1024)
        try db.write { tx throws in
            let t = try tx.createTree("t")
            try tx.put([UInt8](repeating: 7, count: maxKey), [UInt8](repeating: 1, count: 5000), in: t)
            #expect(throws: StrataError.keyTooLarge(size: maxKey + 1, maximum: maxKey)) {
                try tx.put([UInt8](repeating: 7, count: maxKey + 1), [1], in: t)
            }
            try tx.put([UInt8](), [UInt8](), in: t) // empty key and value are legal
        }
        try db.read { tx throws in
            let t = try tx.tree("t")
            #expect(try tx.get([UInt8](repeating: 7, count: maxKey), in: t)?.bytes == [UInt8](repeating: 1, count: 5000))
            #expect(try tx.get([UInt8](), in: t)?.count == 0)
        }
    }

    @Test func largeValuesUseOverflowPages() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        var generator = SeededGenerator(seed: 3)
        let big = (0..<3_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try db.write { tx throws in
            let t = try tx.createTree("t")
            try tx.put("big", big, in: t)
            try tx.put("small", "x", in: t)
        }
        try db.read { tx throws in
            let value = try #require(try tx.get("big", in: tx.tree("t")))
            #expect(value.count == big.count)
            #expect(value.bytes == big)
            #expect(try tx.record(of: tx.tree("t")).overflowPages > 0)
        }
        try db.write { tx throws in #expect(try tx.delete("big", in: tx.tree("t"))) }
        try db.read { tx throws in #expect(try tx.record(of: tx.tree("t")).overflowPages == 0) }
    }

    @Test func readSnapshotIsStableWhileWriterCommits() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx throws in try tx.put("k", "old", in: try tx.createTree("t")) }
        let reader = try db.beginRead()
        for round in 0..<50 {
            try db.write { tx throws in
                let t = try tx.tree("t")
                try tx.put("k", "new \(round)", in: t)
                for i in 0..<50 { try tx.put("filler \(round) \(i)", String(repeating: "x", count: 200), in: t) }
            }
        }
        #expect(try reader.string("k", in: reader.tree("t")) == "old")
        #expect(try reader.count(reader.tree("t")) == 1)
        reader.end()
        try db.read { tx throws in #expect(try tx.string("k", in: tx.tree("t")) == "new 49") }
    }

    @Test func secondWriterInSameProcessIsRefused() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        #expect(throws: StrataError.writerLocked(path: dir.path, holderPID: getpid())) {
            _ = try Database(path: dir.path)
        }
        var options = DatabaseOptions()
        options.writerLockWait = .wait(seconds: 0.05)
        #expect(throws: StrataError.writerLockTimedOut(path: dir.path, holderPID: getpid(), seconds: 0.05)) {
            _ = try Database(path: dir.path, options: options)
        }
        db.close()
        let next = try Database(path: dir.path)
        #expect(next.mode == .readWrite)
    }

    /// A lock file naming a writer that is gone (killed before it could clear its pid, which may
    /// since belong to an unrelated process) does not send a refused writer to that pid.
    @Test func aRefusedWriterIsNotShownADeadHoldersPid() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let exited = Process()
        exited.executableURL = URL(fileURLWithPath: "/bin/true")
        try exited.run()
        exited.waitUntilExit()
        db.lockFile.writerPID.pointee.store(UInt32(bitPattern: exited.processIdentifier), ordering: .releasing)
        #expect(throws: StrataError.writerLocked(path: dir.path, holderPID: 0)) { _ = try Database(path: dir.path) }
        #expect("\(StrataError.writerLocked(path: dir.path, holderPID: 0))".contains("by another process;"))
        db.lockFile.writerPID.pointee.store(UInt32(bitPattern: getpid()), ordering: .releasing)
        #expect(throws: StrataError.writerLocked(path: dir.path, holderPID: getpid())) { _ = try Database(path: dir.path) }
    }

    @Test func writesThroughReadOnlyHandleAndAfterCloseFail() throws {
        let dir = TemporaryDirectory()
        let writer = try Database(path: dir.path)
        let reader = try Database(path: dir.path, mode: .readOnly)
        #expect(throws: StrataError.readOnly) { try reader.write { _ in } }
        writer.close()
        #expect(throws: StrataError.closed(what: "store handle for \(dir.path)")) { try writer.write { _ in } }
        #expect(throws: StrataError.closed(what: "store handle for \(dir.path)")) { try writer.read { _ in } }
    }

    @Test func cursorsWalkBothWays() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let keys = (0..<2000).map { String(format: "key%05d", $0 * 2) }
        try db.write { tx throws in
            let t = try tx.createTree("t")
            for key in keys.shuffled() { try tx.put(key, key, in: t) }
        }
        try db.read { tx throws in
            let cursor = try tx.cursor(tx.tree("t"))
            var seen: [String] = []
            var more = try cursor.first()
            while more { seen.append(String(decoding: try cursor.key().bytes, as: UTF8.self)); more = try cursor.next() }
            #expect(seen == keys)
            seen = []
            more = try cursor.last()
            while more { seen.append(String(decoding: try cursor.key().bytes, as: UTF8.self)); more = try cursor.previous() }
            #expect(seen == keys.reversed())
            #expect(try cursor.seek("key00101"))
            #expect(String(decoding: try cursor.key().bytes, as: UTF8.self) == "key00102")
            #expect(try !cursor.seek("zzz"))
            var ranged: [String] = []
            try tx.scan(tx.tree("t"), from: bytes("key00010"), to: bytes("key00020"), reverse: true) { key, _ in
                ranged.append(String(decoding: key.bytes, as: UTF8.self)); return true
            }
            #expect(ranged == ["key00018", "key00016", "key00014", "key00012", "key00010"])
        }
    }
}

@Suite struct ReaderTableLimitTests {
    @Test func fullReaderTableIsATypedError() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.readerSlots = 2
        let db = try Database(path: dir.path, options: options)
        #expect(db.readerCapacity == 2)
        let first = try db.beginRead()
        let second = try db.beginRead()
        #expect(throws: StrataError.readerTableFull(capacity: 2)) { _ = try db.beginRead() }
        second.end()
        let third = try db.beginRead() // the slot came back
        #expect(third.generation == first.generation)
    }
}
