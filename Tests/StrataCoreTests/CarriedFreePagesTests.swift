import Foundation
import Testing
@_spi(Testing) @testable import StrataCore

/// The free pages a format-4 meta carries (`CarriedFreePages`, `PageAllocator`): small commits
/// leave the free tree alone, a long-lived reader makes the list spill into the free tree without
/// losing a page, format-3 stores keep their format, and a forged list is refused or reported
/// by `check()` (writes catch a forged duplicate only within one transaction, see
/// `CarriedFreePages`).
@Suite struct CarriedFreePagesTests {
    /// The newest meta of the store at `path`, decoded in full (runs and carried pages).
    static func newestMeta(_ path: String, slot: UInt64) throws -> MetaPage {
        let bytes = try readFile(path + "/data", at: slot * 4096, count: 4096)
        return try bytes.withUnsafeBytes { raw in
            try MetaPage.decode(raw, slot: slot).get().decodingRuns(raw).get().decodingCarried(raw).get()
        }
    }

    /// A store of 5000 entries (a tree of depth 2 or more) after `warmUp` one-put commits.
    func filledStore(warmUp: Int = 50) throws -> (TemporaryDirectory, Database) {
        let (dir, db) = try unsyncedStore()
        try db.write { tx in
            let t = try tx.createTree("t")
            for n in 0..<5_000 { try tx.put(String(format: "key %06d", (n * 7_919) % 5_000), [UInt8](repeating: 1, count: 80), in: t) }
        }
        for n in 0..<warmUp { try db.write { tx in try tx.put(String(format: "key %06d", n * 97 % 5_000), "warm", in: try tx.tree("t")) } }
        return (dir, db)
    }

    /// One-put commits in a steady state: each writes the path to its leaf and the catalog, and
    /// its meta carries the pages it freed; the free tree is not rewritten.
    @Test func smallCommitsLeaveTheFreeTreeAlone() throws {
        let (dir, db) = try filledStore()
        defer { withExtendedLifetime(dir) {} }
        var generator = SeededGenerator(seed: testSeed("smallCommitsLeaveTheFreeTreeAlone"))
        let depth = try db.read { try $0.record(of: $0.tree("t")).depth }
        var freeTreeChanges = 0
        var pages: [UInt64] = []
        for _ in 0..<300 {
            let before = try db.read { $0.freeTree }
            try db.write { tx in try tx.put(String(format: "key %06d", generator.next() % 5_000), "small", in: try tx.tree("t")) }
            let meta = try Self.newestMeta(dir.path, slot: db.generation % 2)
            if meta.freeTree != before { freeTreeChanges += 1 }
            pages.append(meta.pageRuns.reduce(0) { $0 + $1.count })
            #expect(meta.carried.wordCount <= CarriedFreePages.wordCapacity(pageSize: 4096))
            #expect(meta.carried.groups.last?.freedBy == meta.transactionID, "the commit carries the pages it freed")
        }
        let mean = Double(pages.reduce(0, +)) / Double(pages.count)
        print("[smallCommitsLeaveTheFreeTreeAlone] free tree rewritten by \(freeTreeChanges) of 300 commits; pages per commit mean \(mean) (tree depth \(depth))")
        #expect(freeTreeChanges <= 3)
        #expect(mean <= Double(depth + 1) + 0.25, "a commit writes its leaf's path and the catalog")
        #expect(try db.check().isClean)
        // The carried pages count as free, in `check` and in the reader report.
        let report = try db.check()
        #expect(report.pageCount == report.treePages + report.freePages + report.metaPages)
    }

    /// A reader that pins an old snapshot keeps the carried groups from becoming reusable: the
    /// list outgrows the meta and spills into the free tree (a reserve stays carried); once the
    /// reader ends, the file stops growing and small commits leave the free tree alone again.
    @Test func aLongLivedReaderMakesTheListSpillIntoTheFreeTree() throws {
        let (dir, db) = try filledStore()
        defer { withExtendedLifetime(dir) {} }
        var generator = SeededGenerator(seed: testSeed("aLongLivedReaderMakesTheListSpill"))
        func commits(_ count: Int) throws -> Int {
            var changes = 0
            for _ in 0..<count {
                let before = try db.read { $0.freeTree }
                try db.write { tx in try tx.put(String(format: "key %06d", generator.next() % 5_000), "pinned", in: try tx.tree("t")) }
                if try db.read({ $0.freeTree }) != before { changes += 1 }
            }
            return changes
        }
        let reader = try db.beginRead()
        let pinnedChanges = try commits(200)
        #expect(pinnedChanges >= 5, "the list spilled into the free tree while the reader pinned its snapshot")
        #expect(try db.check().isClean)
        let pinned = try db.read { $0.pageCount }
        #expect(try reader.string(String(format: "key %06d", 1), in: reader.tree("t")) != nil)
        reader.end()
        _ = try commits(300)
        let settled = try db.read { $0.pageCount }
        let quietChanges = try commits(300)
        let after = try db.read { $0.pageCount }
        print("[aLongLivedReaderMakesTheListSpill] free tree rewritten by \(pinnedChanges) of 200 pinned commits, \(quietChanges) of 300 later; \(pinned) pages pinned, \(settled) -> \(after) after")
        #expect(after <= settled + 16, "the file keeps growing after the reader ended")
        #expect(quietChanges <= 30, "small commits went back to leaving the free tree alone")
        #expect(try db.check().isClean)
    }

    /// A reader without write access to the lock file pins generation 0 of a fresh store (which
    /// reaches no page) while the writer's commits allocate and free pages within one transaction,
    /// until the carried list spills: the reuse limit stayed 0, so leftover pages (`freedBy` 0)
    /// and a pending carried group of `freedBy` 0 were recorded under one free-tree key, and the
    /// spill lost pages. The pin of generation 0 holds nothing back (a later pin does, and the
    /// list spills), and a spill at limit 0 keeps the two in one record.
    @Test func aPinOfGenerationZeroLosesNoPageWhenTheListSpills() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        #expect(db.generation == 0)
        // What a `.readOnly` handle refused write access does (`SnapshotPins`).
        let pinner = try PosixFile(path: dir.path + "/lock", flags: O_RDONLY)
        let pins = SnapshotPins(file: pinner)
        try pins.pin(0)
        var spilled = false
        for commit in 0..<40 {
            // A later pin (generation 5) holds pages back, so the list spills.
            if commit == 5 { try pins.pin(db.generation) }
            #expect(try db.oldestRegisteredSnapshot(below: db.generation + 1) == (commit < 5 ? nil : 5))
            let before = try db.read { $0.freeTree }
            try db.write { tx in
                let t = try commit == 0 ? tx.createTree("t") : tx.tree("t")
                for n in 0..<(commit % 5 == 4 ? 400 : 3) { try tx.put(String(format: "key %05d", (commit * 131 + n * 7) % 4_000), [UInt8](repeating: 7, count: 60), in: t) }
                // An overflow value replaced, then deleted: its runs were allocated and freed
                // here, and are left over as reusable pages.
                for round in 0..<2 { try tx.put("big", [UInt8](repeating: UInt8(round), count: 9_000), in: t) }
                #expect(try tx.delete("big", in: t))
            }
            if try db.read({ $0.freeTree }) != before { spilled = true }
            let report = try db.check()
            #expect(report.isClean, "commit \(commit): \(report.problems.prefix(3))")
            if !report.isClean { break }
        }
        #expect(spilled, "the carried list spilled into the free tree")
        pins.unpin(5)
        pins.unpin(0)
    }

    /// Encoding round-trips, and every malformed list is refused by decoding (a typed
    /// `corruptMeta` at open), whatever its checksums say.
    @Test func malformedListsAreRefused() throws {
        var meta = MetaPage.initial(pageSize: 4096)
        meta.transactionID = 40
        meta.pageCount = 100
        meta.carried.insert(freedBy: 38, pages: [10, 11, 12])
        meta.carried.insert(freedBy: 40, pages: [20, 5])
        meta.pageRuns = [.init(first: 20, count: 2), .init(first: 30, count: 1)]
        func decoded(_ meta: MetaPage, patch: (UnsafeMutableRawPointer) -> Void = { _ in }) -> Result<MetaPage, MetaPage.DecodeFailure> {
            var bytes = [UInt8](repeating: 0, count: 4096)
            return bytes.withUnsafeMutableBytes { raw in
                meta.encode(into: raw.baseAddress!)
                patch(raw.baseAddress!)
                let read = UnsafeRawBufferPointer(raw)
                return MetaPage.decode(read, slot: 0).flatMap { $0.decodingRuns(read) }.flatMap { $0.decodingCarried(read) }
            }
        }
        #expect(try decoded(meta).get() == meta)
        #expect(meta.carried.groups.map(\.pages) == [[10, 11, 12], [5, 20]])
        var forgeries: [(String, MetaPage)] = []
        func forged(_ name: String, _ change: (inout MetaPage) -> Void) {
            var copy = meta
            change(&copy)
            forgeries.append((name, copy))
        }
        forged("page past the page count") { $0.carried.groups[0].pages[2] = 100 }
        forged("meta page 0") { $0.carried.groups[1].pages[0] = 0 }
        forged("meta page 1") { $0.carried.groups[0].pages[0] = 1 }
        forged("page twice in a group") { $0.carried.groups[0].pages = [10, 10, 12] }
        forged("page in two groups") { $0.carried.groups[1].pages = [11, 20] }
        forged("freed after the meta's transaction") { $0.carried.groups[1].freedBy = 41 }
        forged("groups out of order") { $0.carried.groups.swapAt(0, 1) }
        forged("two groups of one transaction") { $0.carried.groups[0].freedBy = 40 }
        forged("an empty group") { $0.carried.groups[0].pages = [] }
        forged("pages out of order") { $0.carried.groups[0].pages = [12, 11, 10] }
        for (name, forgery) in forgeries {
            guard case .failure(.invalid) = decoded(forgery) else {
                Issue.record("a carried list with \(name) decoded")
                continue
            }
        }
        let wordCount = MetaPage.Offset.carriedWordCount
        let patches: [(String, (UInt64, UnsafeMutableRawPointer) -> Void)] = [
            ("a stale checksum", { _, base in base.storeBytes(of: UInt64(13), toByteOffset: MetaPage.encodedSize + 16 + 8, as: UInt64.self) }),
            ("a count past the capacity", { _, base in base.storeBytes(of: UInt32(CarriedFreePages.wordCapacity(pageSize: 4096) + 1), toByteOffset: wordCount, as: UInt32.self) }),
            ("a count past the page", { _, base in base.storeBytes(of: UInt32.max, toByteOffset: wordCount, as: UInt32.self) }),
            ("a page without a group", { _, base in base.storeBytes(of: UInt64(7), toByteOffset: MetaPage.encodedSize + 16 + 8, as: UInt64.self) }),
        ]
        for (name, patch) in patches {
            let result = decoded(meta) { base in
                patch(0, base)
                // Resealed where the forger can: the fixed part, and the list over what it announces.
                let words = min(Int(base.load(fromByteOffset: wordCount, as: UInt32.self)), CarriedFreePages.wordCapacity(pageSize: 4096))
                let block = base + MetaPage.encodedSize + 16
                if name != "a stale checksum" {
                    base.storeBytes(of: Checksum.hash(block + 8, count: 8 * words, seed: CarriedFreePages.checksumSeed(40)), toByteOffset: MetaPage.encodedSize + 16, as: UInt64.self)
                }
                base.storeBytes(of: Checksum.hash(base, count: MetaPage.checksumOffset), toByteOffset: MetaPage.checksumOffset, as: UInt64.self)
            }
            guard case .failure(.invalid) = result else {
                Issue.record("a carried list with \(name) decoded")
                continue
            }
        }
        // Run list and carried pages together stay 8 bytes short of the page.
        var crowded = meta
        crowded.pageRuns = (0..<MetaPage.runCapacity(pageSize: 4096, carriedWords: meta.carried.wordCount) + 1).map { .init(first: 2 + UInt64($0), count: 1) }
        crowded.pageCount = 1_000
        guard case .failure(.invalid) = decoded(crowded) else {
            Issue.record("an overfull meta decoded")
            return
        }
    }

    /// Rewrites the newest meta's carried list with valid checksums (as a forger would).
    func forgeCarried(_ path: String, _ change: (inout MetaPage) -> Void) throws {
        let (generation, pageSize) = try { () throws -> (UInt64, Int) in
            let db = try Database(path: path, mode: .readOnly)
            defer { db.close() }
            return (db.generation, db.pageSize)
        }()
        var meta = try Self.newestMeta(path, slot: generation % 2)
        change(&meta)
        var bytes = [UInt8](repeating: 0, count: pageSize)
        bytes.withUnsafeMutableBytes { meta.encode(into: $0.baseAddress!) }
        try patchFile(path + "/data", at: (generation % 2) * UInt64(pageSize), bytes)
        try waitUntilNobodyHasTheStoreOpen(path)
    }

    /// A well-formed list that names a page a tree reaches, or one the free tree lists too:
    /// `check` reports it, and writes either go on without handing a page out twice (the store
    /// checks as before plus the forged page) or fail with a typed error.
    @Test func forgedPagesThatAreNotFreeAreCaught() throws {
        for target in ["tree", "free tree"] {
            let (dir, db) = try filledStore(warmUp: 0)
            defer { withExtendedLifetime(dir) {} }
            // Free-tree records: a reader pins a snapshot until the carried list spills.
            let reader = try db.beginRead()
            for n in 0..<60 { try db.write { tx in try tx.put(String(format: "key %06d", n * 13), "x", in: try tx.tree("t")) } }
            reader.end()
            for n in 0..<5 { try db.write { tx in try tx.put(String(format: "key %06d", n * 17), "y", in: try tx.tree("t")) } }
            let victim: UInt64 = try db.read { tx in
                if target == "tree" { return try tx.record(of: tx.tree("t")).root }
                let cursor = Cursor(access: tx.access, record: tx.freeTree)
                #expect(try cursor.first())
                return try cursor.value().withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            }
            db.close()
            try forgeCarried(dir.path) { meta in
                #expect(!meta.carried.isEmpty)
                meta.carried.insert(freedBy: 1, pages: [victim])
            }
            let reopened = try Database(path: dir.path, options: { var o = DatabaseOptions(); o.durability = .none; return o }())
            defer { reopened.close() }
            let report = try reopened.check()
            #expect(report.problems.contains { $0.contains("page \(victim) is") }, "\(target): \(report.problems.prefix(3))")
            if target == "free tree" {
                // The writer takes the carried copy first; the free tree's copy is refused.
                do {
                    // Commits that need more pages than the carried list holds load every record.
                    for n in 0..<100 {
                        try reopened.write { tx in
                            for m in 0..<50 { try tx.put(String(format: "new %06d", n * 50 + m), [UInt8](repeating: 3, count: 200), in: try tx.tree("t")) }
                        }
                    }
                    Issue.record("writes went on with page \(victim) listed free twice")
                } catch let error as StrataError {
                    guard case .corruptPage = error else {
                        Issue.record("\(error)")
                        continue
                    }
                }
            }
        }
    }

    /// A store created by a format-3 Strata opens, reads and takes commits, and stays format 3:
    /// its metas carry no free pages, so processes still running a format-3 build keep working
    /// with it. A compacting copy of it is format 4 (and carries free pages); a page copy stays 3.
    @Test func aFormatThreeStoreKeepsItsFormatAndACompactingCopyIsFormatFour() throws {
        let dir = TemporaryDirectory()
        try LegacyFormatStore.create(at: dir.path, formatVersion: 3)
        do {
            let db = try Database(path: dir.path, mode: .readOnly)
            defer { db.close() }
            #expect(db.storeFormatVersion == 3, "a never-committed format-3 store")
        }
        let db = try Database(path: dir.path)
        defer { db.close() }
        #expect(db.storeFormatVersion == 3)
        try db.write { tx in
            let t = try tx.createTree("t")
            for n in 0..<2_000 { try tx.put(String(format: "key %05d", n), "value \(n)", in: t) }
        }
        for n in 0..<20 { try db.write { tx in try tx.put(String(format: "key %05d", n), "again", in: try tx.tree("t")) } }
        #expect(try LegacyFormatStore.formatVersion(dir.path, slot: 0) == 3)
        #expect(try LegacyFormatStore.formatVersion(dir.path, slot: 1) == 3)
        #expect(db.storeFormatVersion == 3)
        #expect(try db.read { try $0.carriedFree() }.isEmpty)
        #expect(try db.check().isClean)
        do {
            let reader = try Database(path: dir.path, mode: .readOnly)
            defer { reader.close() }
            #expect(try reader.read { try $0.string("key 01999", in: $0.tree("t")) } == "value 1999")
        }
        let copies = TemporaryDirectory()
        for compact in [false, true] {
            let destination = copies.parent + (compact ? "/compact" : "/page")
            try db.copy(to: destination, compact: compact)
            let copy = try Database(path: destination, options: { var o = DatabaseOptions(); o.durability = .none; return o }())
            defer { copy.close() }
            #expect(copy.storeFormatVersion == (compact ? 4 : 3))
            for n in 0..<20 { try copy.write { tx in try tx.put(String(format: "key %05d", n * 31), "copy", in: try tx.tree("t")) } }
            let generation = copy.generation
            #expect(try LegacyFormatStore.formatVersion(destination, slot: generation % 2) == (compact ? 4 : 3))
            #expect(try copy.read { try !$0.carriedFree().isEmpty } == compact, "only format 4 carries free pages")
            #expect(try copy.check().isClean)
            #expect(try copy.read { try $0.count($0.tree("t")) } == 2_000)
        }
    }

    /// A newer build commits a meta of a format this build does not know while a reader of this
    /// build has the store open: the reader's next transaction fails at once with
    /// `unsupportedFormat` (it used to retry the meta as if torn, then call it `corruptMeta`).
    @Test func aNewerFormatUnderARunningReaderIsUnsupported() throws {
        let (dir, db) = try unsyncedStore()
        defer { withExtendedLifetime(dir) {} }
        try db.write { tx in try tx.put("a", "1", in: try tx.createTree("t")) }
        let reader = try Database(path: dir.path, mode: .readOnly)
        defer { reader.close() }
        #expect(try reader.read { try $0.string("a", in: $0.tree("t")) } == "1")
        // The commit is published; its meta is then what a format-5 build would have written.
        try db.write { tx in try tx.put("a", "2", in: try tx.tree("t")) }
        try LegacyFormatStore.forgeFormatVersion(5, dir.path, slots: [db.generation % 2])
        #expect(throws: StrataError.unsupportedFormat(path: dir.path, found: 5, supported: PageLayout.formatVersion)) {
            _ = try reader.read { try $0.string("a", in: $0.tree("t")) }
        }
    }

    /// Power loss (or bit rot) damages one byte of the newest meta's carried free pages after
    /// its fixed part reached the disk: the store opens at the commit before it and reports the
    /// skipped commit with the reason (it used to be dropped silently), for a reader and the writer.
    @Test func aDamagedCarriedListIsASkippedCommit() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(path: dir.path)
            defer { db.close() }
            try db.write { tx in
                let t = try tx.createTree("t")
                for n in 0..<500 { try tx.put(String(format: "key %05d", n), [UInt8](repeating: 1, count: 60), in: t) }
            }
            for n in 0..<10 { try db.write { tx in try tx.put(String(format: "key %05d", n * 37), "v\(n)", in: try tx.tree("t")) } }
        }
        let generation: UInt64 = 11
        let meta = try Self.newestMeta(dir.path, slot: generation % 2)
        #expect(meta.transactionID == generation)
        #expect(!meta.carried.isEmpty, "the newest meta carries free pages")
        // The carried block: its checksum, then the words; damage the last word's low byte.
        let lastWord = MetaPage.encodedSize + 8 * meta.pageRuns.count + 8 * meta.carried.wordCount
        let offset = (generation % 2) * 4096 + UInt64(lastWord)
        var byte = try readFile(dir.path + "/data", at: offset, count: 1)
        byte[0] ^= 0x10
        try patchFile(dir.path + "/data", at: offset, byte)
        for mode in [AccessMode.readOnly, .readWrite] {
            let db = try Database(path: dir.path, mode: mode)
            defer { db.close() }
            #expect(db.generation == generation - 1, "\(mode)")
            #expect(db.skippedCommit?.generation == generation, "\(mode)")
            #expect(db.skippedCommit?.reason.contains("carried free pages fail their checksum") == true, "\(mode): \(String(describing: db.skippedCommit))")
            #expect(try db.read { try $0.string(String(format: "key %05d", 9 * 37), in: $0.tree("t")) } != "v9")
            #expect(try db.read { try $0.string(String(format: "key %05d", 8 * 37), in: $0.tree("t")) } == "v8")
            if mode == .readWrite {
                try db.write { tx in try tx.put("after", "skip", in: try tx.tree("t")) }
                #expect(try db.check().isClean)
            }
        }
    }

    /// A commit whose meta carries free pages fails with ENOSPC at each of its writes and at its
    /// flush, and is retried: the retry starts from the base's carried list again (the failed
    /// attempt's list never took effect), commits, and the store checks clean, before and after
    /// reopening, with every entry the model holds.
    @Test func aFailedCommitIsRetriedWithTheCarriedList() throws {
        for step in [FaultyIO.Step.pages, .meta, .metaSync] {
            let dir = TemporaryDirectory()
            let box = IOBox<FaultyIO>()
            var options = DatabaseOptions()
            box.install(in: &options) { FaultyIO(inner: $0) }
            var model: [String: String] = [:]
            do {
                let db = try Database(path: dir.path, options: options)
                defer { db.close() }
                try db.write { tx in
                    let t = try tx.createTree("t")
                    for n in 0..<800 {
                        try tx.put(String(format: "key %05d", n), "first \(n)", in: t)
                        model[String(format: "key %05d", n)] = "first \(n)"
                    }
                }
                for n in 0..<30 {
                    let key = String(format: "key %05d", n * 23 % 800)
                    try db.write { tx in try tx.put(key, "small \(n)", in: try tx.tree("t")) }
                    model[key] = "small \(n)"
                }
                let base = try db.read { ($0.generation, try $0.carriedFree()) }
                #expect(!base.1.isEmpty, "\(step): the base carries free pages")
                box.io!.armed = (step, .enospc, 1)
                func update() throws {
                    try db.write { tx in
                        let t = try tx.tree("t")
                        for n in 0..<3 { try tx.put(String(format: "key %05d", n * 101 % 800), "retried \(n)", in: t) }
                    }
                }
                #expect(throws: StrataError.self, "\(step)") { try update() }
                #expect(box.io!.injected == 1, "\(step)")
                #expect(try db.read { ($0.generation, try $0.carriedFree()) } == base, "\(step): the failed commit changed nothing")
                try update()
                for n in 0..<3 { model[String(format: "key %05d", n * 101 % 800)] = "retried \(n)" }
                #expect(db.generation == base.0 + 1, "\(step)")
                #expect(try !db.read { try $0.carriedFree() }.isEmpty, "\(step): the retry carries free pages")
                for n in 0..<20 {
                    let key = String(format: "key %05d", n * 7 % 800)
                    try db.write { tx in try tx.put(key, "after \(n)", in: try tx.tree("t")) }
                    model[key] = "after \(n)"
                }
                let report = try db.check()
                #expect(report.isClean, "\(step): \(report.problems.prefix(3))")
            }
            let reopened = try Database(path: dir.path)
            defer { reopened.close() }
            #expect(reopened.skippedCommit == nil, "\(step)")
            #expect(try reopened.check().isClean, "\(step)")
            var seen: [String: String] = [:]
            try reopened.read { tx in
                try tx.scan(tx.tree("t")) { key, value in
                    seen[String(decoding: key.bytes, as: UTF8.self)] = String(decoding: value.bytes, as: UTF8.self)
                    return true
                }
            }
            #expect(seen == model, "\(step)")
        }
    }

    /// A newest meta whose carried list is malformed but checksummed (a forgery) appears under
    /// a running reader: its reads go on (readers copy and checksum the list but decode it only
    /// for `check`, `copy` and `readerReport`), and `check` fails with `corruptMeta`.
    @Test func aMalformedCarriedListFailsOnlyWhatDecodesIt() throws {
        let (dir, db) = try filledStore(warmUp: 5)
        defer { withExtendedLifetime(dir) {} }
        let reader = try Database(path: dir.path, mode: .readOnly)
        defer { reader.close() }
        #expect(try reader.read { try $0.count($0.tree("t")) } == 5_000)
        try db.write { tx in try tx.put("key 000001", "forged next", in: try tx.tree("t")) }
        let slot = db.generation % 2
        var meta = try Self.newestMeta(dir.path, slot: slot)
        #expect(!meta.carried.isEmpty)
        meta.carried.groups[meta.carried.groups.count - 1].freedBy += 1 // freed after the meta
        var bytes = [UInt8](repeating: 0, count: 4096)
        bytes.withUnsafeMutableBytes { meta.encode(into: $0.baseAddress!) }
        try patchFile(dir.path + "/data", at: slot * 4096, Array(bytes.prefix(meta.byteCount)))
        #expect(try reader.read { try $0.string("key 000001", in: $0.tree("t")) } == "forged next")
        do {
            _ = try reader.check()
            Issue.record("check accepted a malformed carried list")
        } catch StrataError.corruptMeta(_, let reason) {
            #expect(reason.contains("after its own"), "\(reason)")
        }
    }

    /// A page copy of a store whose meta carries free pages carries them too: the copy checks
    /// clean (no page lost) and takes commits.
    @Test func aPageCopyCarriesTheFreePages() throws {
        let (dir, db) = try filledStore()
        defer { withExtendedLifetime(dir) {} }
        #expect(try !db.read { try $0.carriedFree() }.isEmpty)
        let copies = TemporaryDirectory()
        try db.copy(to: copies.parent + "/page")
        let copy = try Database(path: copies.parent + "/page")
        defer { copy.close() }
        #expect(try copy.read { try $0.carriedFree() } == db.read { try $0.carriedFree() })
        #expect(try copy.check().isClean)
        for n in 0..<20 { try copy.write { tx in try tx.put(String(format: "key %06d", n), "copy", in: try tx.tree("t")) } }
        #expect(try copy.check().isClean)
    }
}
