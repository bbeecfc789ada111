import Foundation
import Testing
@testable import StrataCore

/// Damaged, truncated and foreign files give typed errors, never a crash.
@Suite struct CorruptInputTests {
    /// A store with several committed generations and a multi-level tree.
    func makeStore() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        for round in 0..<3 {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                for i in 0..<600 { try tx.put(String(format: "key %05d", i), "value \(round) \(i)", in: t) }
            }
        }
        db.close()
        return dir
    }

    func patch(_ path: String, at offset: UInt64, _ bytes: [UInt8]) throws { try patchFile(path, at: offset, bytes) }

    func read(_ path: String, at offset: UInt64, count: Int) throws -> [UInt8] { try readFile(path, at: offset, count: count) }

    @Test func truncatedDataFile() throws {
        let dir = try makeStore()
        let data = dir.path + "/data"
        let pageSize = try Database(path: dir.path, mode: .readOnly).pageSize
        // Shorter than every commit's pages: nothing to fall back to.
        truncate(data, off_t(3 * pageSize))
        #expect {
            _ = try Database(path: dir.path, mode: .readOnly)
        } throws: { error in
            guard case StrataError.truncatedFile = error else { return false }
            return true
        }
    }

    /// A file that lost the tail the newest commit grew it by (its size change never reached the
    /// disk) opens at the commit before, which fits.
    @Test func dataFileCutInsideTheNewestCommitOpensAtTheOneBefore() throws {
        let dir = try makeStore()
        let data = dir.path + "/data"
        // The handle is gone before the file is cut (as after a crash): a store nobody has open
        // is verified when it is opened.
        let (generation, pageCount, pageSize, expected) = try { () throws -> (UInt64, UInt64, Int, StoreContent) in
            let db0 = try Database(path: dir.path)
            let (generation, pageCount, pageSize) = try db0.read { ($0.generation, $0.pageCount, $0.database.pageSize) }
            let expected = try db0.read { try content(of: $0) }
            try db0.write { tx in try tx.put("grown", [UInt8](repeating: 7, count: 1 << 20), in: try tx.tree("t")) }
            return (generation, pageCount, pageSize, expected)
        }()
        truncate(data, off_t(pageCount * UInt64(pageSize)))
        try waitUntilNobodyHasTheStoreOpen(dir.path)
        let db = try Database(path: dir.path)
        #expect(db.generation == generation)
        #expect(try db.read { try content(of: $0) } == expected)
        #expect(try db.check().isClean)
    }

    @Test func corruptNewestMetaFallsBackToThePreviousCommit() throws {
        let dir = try makeStore()
        let (generation, pageSize) = try { () throws -> (UInt64, Int) in
            let db0 = try Database(path: dir.path, mode: .readOnly)
            return (db0.generation, db0.pageSize)
        }()
        // Flip a byte inside the newest meta (slot generation % 2).
        let offset = UInt64(Int(generation % 2) * pageSize + 60)
        let original = try read(dir.path + "/data", at: offset, count: 1)
        try patch(dir.path + "/data", at: offset, [original[0] ^ 0xFF])
        try waitUntilNobodyHasTheStoreOpen(dir.path)
        let db = try Database(path: dir.path)
        #expect(db.generation == generation - 1)
        try db.read { tx throws in #expect(try tx.string("key 00001", in: tx.tree("t")) == "value 1 1") }
        #expect(try db.check().isClean)
        // The next commit overwrites the damaged slot and the store moves on.
        try db.write { tx in try tx.put("after", "repair", in: try tx.tree("t")) }
        #expect(db.generation == generation)
    }

    /// A meta whose transaction number is near `UInt64.max` (forged with valid checksums, or bit
    /// rot that kept them) would make the next write's `transactionID + 1` and the reader report's
    /// `generation + 1` trap. Such a meta is refused like any other invalid one: the store opens at
    /// the commit before, writes and reports readers.
    /// Rewrites the newest meta of the store at `path` to hold transaction `forged` (of the
    /// slot's parity) and name no pages, with valid checksums; returns the generation it had.
    func forgeNewestMeta(_ path: String, transaction forged: (_ generation: UInt64) -> UInt64) throws -> UInt64 {
        let (generation, pageSize) = try { () throws -> (UInt64, Int) in
            let db0 = try Database(path: path, mode: .readOnly)
            return (db0.generation, db0.pageSize)
        }()
        let start = Int(generation % 2) * pageSize
        var meta = try read(path + "/data", at: UInt64(start), count: pageSize)
        let transaction = forged(generation)
        meta.withUnsafeMutableBytes { bytes in
            let base = bytes.baseAddress!
            base.storeBytes(of: transaction, toByteOffset: MetaPage.Offset.transactionID, as: UInt64.self)
            // A meta naming no pages passes verification at open whatever its commit wrote.
            base.storeBytes(of: UInt32(0), toByteOffset: MetaPage.Offset.runCount, as: UInt32.self)
            // Nor carry free pages (their checksum is seeded by the transaction id).
            base.storeBytes(of: UInt32(0), toByteOffset: MetaPage.Offset.carriedWordCount, as: UInt32.self)
            base.storeBytes(of: UInt64(0), toByteOffset: MetaPage.Offset.pageDigest, as: UInt64.self)
            let list = Checksum.hash(base + MetaPage.Offset.pageDigest, count: 8, seed: Checksum.seed ^ transaction)
            base.storeBytes(of: list, toByteOffset: MetaPage.Offset.runChecksum, as: UInt64.self)
            base.storeBytes(of: Checksum.hash(base, count: MetaPage.checksumOffset), toByteOffset: MetaPage.checksumOffset, as: UInt64.self)
        }
        try patch(path + "/data", at: UInt64(start), meta)
        try waitUntilNobodyHasTheStoreOpen(path)
        return generation
    }

    /// A meta whose transaction number is near `UInt64.max` (forged with valid checksums, or bit
    /// rot that kept them) would make the next write's `transactionID + 1` and the reader report's
    /// `generation + 1` trap. Such a meta is refused like any other invalid one: the store opens at
    /// the commit before, writes and reports readers.
    @Test func forgedHugeTransactionNumberIsRefusedNotTrapped() throws {
        let dir = try makeStore()
        let generation = try forgeNewestMeta(dir.path) { UInt64.max - (1 - $0 % 2) } // the slot's parity
        let db = try Database(path: dir.path)
        defer { db.close() }
        #expect(db.generation == generation - 1)
        _ = try db.readerReport()
        try db.write { tx in try tx.put("after", "forgery", in: try tx.tree("t")) }
        #expect(db.generation == generation)
        #expect(try db.check().isClean)
        #expect(MetaPage.largestTransactionID < SnapshotPins.largestPinnable)
    }

    /// A meta at exactly the largest valid transaction number opens and reads, but takes no
    /// commit: the next one's meta could never be read back.
    @Test func aStoreAtTheLargestTransactionNumberTakesNoMoreCommits() throws {
        let dir = try makeStore()
        _ = try forgeNewestMeta(dir.path) { MetaPage.largestTransactionID - ($0 % 2 == 0 ? 0 : 1) }
        let db = try Database(path: dir.path)
        defer { db.close() }
        #expect(db.generation >= MetaPage.largestTransactionID - 1)
        try db.read { tx throws in #expect(try tx.string("key 00001", in: tx.tree("t")) != nil) }
        // An odd slot holds the number below the largest: one more commit reaches it.
        if db.generation < MetaPage.largestTransactionID { try db.write { tx in try tx.put("last", "one", in: try tx.tree("t")) } }
        #expect(db.generation == MetaPage.largestTransactionID)
        #expect(throws: StrataError.self) { try db.write { tx in try tx.put("after", "x", in: try tx.tree("t")) } }
        #expect(db.generation == MetaPage.largestTransactionID)
        try db.read { tx throws in #expect(try tx.string("key 00001", in: tx.tree("t")) != nil) }
    }

    @Test func bothMetasCorrupt() throws {
        let dir = try makeStore()
        let pageSize = try Database(path: dir.path, mode: .readOnly).pageSize
        try patch(dir.path + "/data", at: 100, [0xAA, 0xBB])
        try patch(dir.path + "/data", at: UInt64(pageSize + 100), [0xAA, 0xBB])
        #expect {
            _ = try Database(path: dir.path, mode: .readOnly)
        } throws: { error in
            guard case StrataError.corruptMeta = error else { return false }
            return true
        }
    }

    @Test func foreignFiles() throws {
        let dir = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.path, withIntermediateDirectories: true)
        try Data("this is not a database, it is a shopping list\n".utf8 + Data(repeating: 0x41, count: 9000))
            .write(to: URL(fileURLWithPath: dir.path + "/data"))
        #expect(throws: StrataError.notAStore(path: dir.path, reason: "the data file does not start with a Strata header")) {
            _ = try Database(path: dir.path)
        }
        let plainFile = dir.parent + "/plain.txt"
        try Data("hello".utf8).write(to: URL(fileURLWithPath: plainFile))
        #expect(throws: StrataError.notAStore(path: plainFile, reason: "it is not a directory")) {
            _ = try Database(path: plainFile)
        }
        let empty = dir.parent + "/empty.strata"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(throws: StrataError.notAStore(path: empty, reason: "it has no data file (open it read-write to create a store)")) {
            _ = try Database(path: empty, mode: .readOnly)
        }
        let link = dir.parent + "/link.strata"
        let real = try makeStore()
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real.path)
        #expect(throws: StrataError.notAStore(path: link, reason: "it is a symbolic link; open the directory it points to")) {
            _ = try Database(path: link)
        }
    }

    @Test func futureFormatVersion() throws {
        let dir = try makeStore()
        let db0 = try Database(path: dir.path, mode: .readOnly)
        let pageSize = db0.pageSize
        db0.close()
        // Rewrite both metas as the next format with valid checksums: a newer Strata wrote this store.
        let future = PageLayout.formatVersion + 1
        for slot in 0..<2 {
            let offset = UInt64(slot * pageSize)
            var meta = try read(dir.path + "/data", at: offset, count: MetaPage.encodedSize)
            meta.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: future, toByteOffset: 40, as: UInt32.self)
                raw.storeBytes(of: Checksum.hash(raw.baseAddress!, count: MetaPage.checksumOffset), toByteOffset: MetaPage.checksumOffset, as: UInt64.self)
            }
            try patch(dir.path + "/data", at: offset, meta)
        }
        #expect(throws: StrataError.unsupportedFormat(path: dir.path, found: future, supported: PageLayout.formatVersion)) {
            _ = try Database(path: dir.path, mode: .readOnly)
        }
    }

    @Test func flippedBytesInTreePagesAreReportedNotCrashed() throws {
        let seed = testSeed("flippedBytes")
        var random = SeededGenerator(seed: seed)
        for _ in 0..<40 {
            let dir = try makeStore()
            let data = dir.path + "/data"
            let size = try FileManager.default.attributesOfItem(atPath: data)[.size] as! UInt64
            let pageSize = 4096
            // Damage a few bytes of some tree page (never the metas).
            for _ in 0..<Int.random(in: 1...8, using: &random) {
                let offset = UInt64.random(in: UInt64(2 * pageSize)..<size, using: &random)
                try patch(data, at: offset, [UInt8.random(in: 0...255, using: &random)])
            }
            // Damage in pages that the newest commits wrote is found at open: the store opens at an
            // older commit, or (if the commit before is damaged too) refuses with `corruptMeta`.
            let db: Database
            do {
                db = try Database(path: dir.path)
            } catch StrataError.corruptMeta {
                continue
            }
            // Reads either succeed or throw a typed error; check() reports damage it finds.
            do {
                try db.read { tx throws in
                    let t = try tx.tree("t")
                    try tx.scan(t) { _, _ in true }
                    for i in 0..<600 { _ = try tx.get(String(format: "key %05d", i), in: t) }
                }
            } catch is StrataError {}
            // check() must report, not throw or crash.
            _ = try db.check()
            // Writing over damage either works or fails cleanly.
            do { try db.write { tx in try tx.put("key 00007", "x", in: try tx.tree("t")) } } catch is StrataError {}
        }
    }

    @Test func checkFindsAFlippedValueByte() throws {
        let dir = try makeStore()
        let db0 = try Database(path: dir.path)
        // Find the leaf holding a known value and flip one byte of the value.
        let (page, offset) = try db0.read { tx -> (UInt64, Int) in
            let value = try #require(try tx.get("key 00300", in: tx.tree("t")))
            let address = value.withUnsafeBytes { UInt(bitPattern: $0.baseAddress!) }
            let base = UInt(bitPattern: tx.access.base)
            let distance = Int(address - base)
            return (UInt64(distance / db0.pageSize), distance)
        }
        db0.close()
        let original = try read(dir.path + "/data", at: UInt64(offset), count: 1)
        try patch(dir.path + "/data", at: UInt64(offset), [original[0] ^ 0x01])
        let report = try Database(path: dir.path, mode: .readOnly).check()
        #expect(report.problems.contains { $0.contains("page \(page) fails its checksum") })
        var options = DatabaseOptions()
        options.verifyChecksums = true
        let paranoid = try Database(path: dir.path, mode: .readOnly, options: options)
        #expect {
            try paranoid.read { tx in _ = try tx.get("key 00300", in: tx.tree("t")) }
        } throws: { error in
            guard case StrataError.corruptPage(let number, _) = error else { return false }
            return number == page
        }
    }

    /// A leaf whose overflow pointer was redirected at another tree's page: replacing that value
    /// must report the damage, not put the other tree's page on the free list (where the next
    /// commits would reuse it while the tree still points at it).
    @Test func aForgedOverflowPointerIsNotFreed() throws {
        let dir = TemporaryDirectory()
        let (leaf, victim, pageSize, pageChecksum) = try { () throws -> (UInt64, UInt64, Int, PageChecksum) in
            let db0 = try Database(path: dir.path)
            try db0.write { tx in
                try tx.put("big", [UInt8](repeating: 7, count: 10_000), in: try tx.openOrCreateTree("a"))
                let b = try tx.openOrCreateTree("b")
                for i in 0..<600 { try tx.put(String(format: "key %05d", i), "value \(i)", in: b) }
            }
            // A later commit elsewhere, so the leaf forged below is not one the newest commit
            // wrote (opening would find that commit's pages altered and open at the one before).
            try db0.write { tx in try tx.put("later", "commit", in: try tx.openOrCreateTree("c")) }
            return try db0.read { tx in
                (try tx.record(of: try tx.tree("a")).root, try tx.record(of: try tx.tree("b")).root, tx.database.pageSize,
                 tx.database.pageChecksum)
            }
        }()
        let data = dir.path + "/data"
        var page = try read(data, at: leaf * UInt64(pageSize), count: pageSize)
        // The leaf's one node (slot 0): u8 flags, u8, u16 key length, u32 value length, key, then
        // the u64 overflow page number, which is pointed at tree b's root instead. (Searching the
        // page for the number is not reliable: the free gap of a recycled buffer holds stale bytes.)
        func load<T: FixedWidthInteger>(_ offset: Int, as: T.Type) -> T {
            page[offset..<offset + MemoryLayout<T>.size].withUnsafeBytes { $0.loadUnaligned(as: T.self) }
        }
        let node = Int(load(PageLayout.headerSize, as: UInt16.self))
        try #require(page[node] & LeafFlags.overflow != 0, "slot 0 of leaf \(leaf) is not an overflow node")
        let pointer = node + PageLayout.leafNodeHeader + Int(load(node + 2, as: UInt16.self))
        let run = load(pointer, as: UInt64.self)
        let header = try read(data, at: run * UInt64(pageSize) + UInt64(PageLayout.kindOffset), count: 1)
        try #require(header == [PageKind.overflow.rawValue], "leaf \(leaf) names page \(run), not an overflow run")
        withUnsafeBytes(of: victim) { page.replaceSubrange(pointer..<pointer + 8, with: $0) }
        let checksum = page.withUnsafeBytes { pageChecksum.of($0.baseAddress!, byteCount: pageSize) }
        withUnsafeBytes(of: checksum) { page.replaceSubrange(PageLayout.checksumOffset..<PageLayout.checksumOffset + 8, with: $0) }
        try patch(data, at: leaf * UInt64(pageSize), page)

        let db = try Database(path: dir.path)
        defer { db.close() }
        #expect {
            try db.write { tx in _ = try tx.put("big", "small", in: try tx.tree("a")) }
        } throws: { error in
            guard case StrataError.corruptPage = error else { return false }
            return true
        }
        // Nothing was committed: tree b is whole.
        try db.read { tx throws in #expect(try tx.string("key 00123", in: try tx.tree("b")) == "value 123") }
    }
}

