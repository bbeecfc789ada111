import Foundation
import Testing
@testable import StrataCore

/// The page checksums of both hashes (`PageChecksum`): their values are pinned (they are part of
/// the on-disk format), damage to a format-4 store is reported as a typed error, and a store
/// created before format 3 keeps opening, reading, committing and verifying in format 2.
@Suite struct PageChecksumTests {
    /// Deterministic bytes for the known-answer tests.
    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7 ^ ($0 >> 8)) }
    }

    static let lengths = [0, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 63, 64, 65, 127, 128, 200, 4072, 4096 * 3 - 24]

    static func hashes(_ hash: (UnsafeRawPointer, Int, UInt64) -> UInt64) -> [UInt64] {
        let bytes = pattern(4096 * 3)
        return bytes.withUnsafeBytes { raw in lengths.map { hash(raw.baseAddress!, $0, 0x0123_4567_89AB_CDEF) } }
    }

    /// Fixed bytes -> fixed values: an accidental change of either hash changes the format.
    @Test func knownAnswers() {
        let folded = PageChecksumTests.hashes { FoldedMultiplyHash.hash($0, count: $1, seed: $2) }
        let legacy = PageChecksumTests.hashes { Checksum.hash($0, count: $1, seed: $2) }
        #expect(folded == PageChecksumTests.foldedMultiplyAnswers, "\(folded.map { String($0, radix: 16) })")
        #expect(legacy == PageChecksumTests.multiplyXorshiftAnswers, "\(legacy.map { String($0, radix: 16) })")
        // A page: seeded by its number and transaction id, covering bytes 24..<end.
        var page = PageChecksumTests.pattern(4096)
        page.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt64(77), toByteOffset: PageLayout.pageNumberOffset, as: UInt64.self)
            raw.storeBytes(of: UInt64(1234), toByteOffset: PageLayout.transactionOffset, as: UInt64.self)
        }
        let (newPage, oldPage, oldFormula) = page.withUnsafeBytes { raw in
            (PageChecksum.foldedMultiply.of(raw.baseAddress!, byteCount: 4096),
             PageChecksum.multiplyXorshift.of(raw.baseAddress!, byteCount: 4096),
             // Format 2's page checksum as format-2 Strata computed it (`PageBuffer.checksum`).
             Checksum.hash(raw.baseAddress! + 24, count: 4072, seed: 77 ^ (1234 &* 31)))
        }
        #expect(oldPage == oldFormula)
        #expect(newPage == 0x3373_9e18_c94e_9f44, "\(String(newPage, radix: 16))")
        #expect(oldPage == 0xa9b8_358b_0b4a_df0a, "\(String(oldPage, radix: 16))")
    }

    static let foldedMultiplyAnswers: [UInt64] = [
        0x59c7_875e_4a01_775c, 0x8dfc_44d9_f7b9_41c3, 0xf66f_0a46_ad5f_54d9, 0x0086_315c_37fe_a314,
        0xe2af_59c8_c347_0569, 0xf184_646a_1c91_53ad, 0xaf86_9d1a_462b_d779, 0x4380_f565_aec9_f73b,
        0xc031_2956_789b_6756, 0xc766_6d8f_4086_f775, 0x5645_0206_a605_339e, 0xd552_3e0d_a813_b7fc,
        0x6ba7_2430_abad_4bee, 0x5859_ee35_fbf0_937f, 0x8322_c93c_fa0e_d673, 0x3c8e_59f3_428a_cec2,
        0x9569_51fd_ce8c_c389, 0x3144_1221_f96f_df7c, 0x7f25_2fd5_f49f_d25f, 0x5e41_6c41_ab8a_40ef,
        0x4393_3831_c0ad_373b,
    ]
    /// Computed by the format-2 build's own `Checksum` (commit 99296aa), so format-2 stores written
    /// by older builds verify with this one.
    static let multiplyXorshiftAnswers: [UInt64] = [
        0xa118_fbed_0e21_007c, 0xe3a7_9c9f_a0a9_8202, 0x1488_78a6_83a3_5be0, 0x516a_fd1c_2413_acb4,
        0x0772_bfdb_14c8_67af, 0xa748_91db_12bd_b00a, 0xe152_6e83_ef3c_b67b, 0xeb08_3c2f_ae79_ec1f,
        0xb966_0757_1a82_6391, 0xde22_3923_9bd5_3c97, 0xdc65_95a2_83e2_ab35, 0x68f6_2c77_6733_e355,
        0xde49_3c28_c497_d52a, 0x16f3_61cd_31e3_670d, 0x36c6_fc27_a1dc_52bc, 0x29e1_e3d7_e8b7_57bb,
        0x48d2_259e_8bf2_b98b, 0xee41_7304_f9aa_620d, 0xb664_99e1_b0cc_43fa, 0x3c19_49cd_6afe_ff75,
        0x8561_33ce_c590_f980,
    ]

    /// Fixed words a value could hold — the hash's own constants (SHA-512's initial values, which
    /// any stored binary with SHA-512 or BLAKE2b embeds), zero, all ones — placed at every word of
    /// a page never make the checksum forget the bytes before them. (A first draft xored data
    /// words with those constants alone, and such a word zeroed its lane's product.)
    @Test func storedConstantsNeverSilenceEarlierBytes() {
        let fixedWords: [UInt64] = [
            0x6A09_E667_F3BC_C908, 0x6A09_E667_F3BC_C909, 0xBB67_AE85_84CA_A73B, 0x3C6E_F372_FE94_F82B,
            0xA54F_F53A_5F1D_36F1, 0x510E_527F_ADE6_82D1, 0x9B05_688C_2B3E_6C1F, 0x1F83_D9AB_FB41_BD6B,
            0x5BE0_CD19_137E_2179, 0, .max,
        ]
        var page = PageChecksumTests.pattern(4096)
        page.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt64(3), toByteOffset: PageLayout.pageNumberOffset, as: UInt64.self)
            raw.storeBytes(of: UInt64(1), toByteOffset: PageLayout.transactionOffset, as: UInt64.self)
        }
        var silenced: [(word: UInt64, offset: Int)] = []
        for fixed in fixedWords {
            for offset in stride(from: 32, to: 4096, by: 8) {
                var probe = page
                probe.withUnsafeMutableBytes { $0.storeBytes(of: fixed, toByteOffset: offset, as: UInt64.self) }
                let before = probe.withUnsafeBytes { PageChecksum.foldedMultiply.of($0.baseAddress!, byteCount: 4096) }
                // A change in the first checksummed byte and in the byte just before the word.
                for earlier in [24, offset - 1] {
                    probe[earlier] ^= 0x5A
                    let after = probe.withUnsafeBytes { PageChecksum.foldedMultiply.of($0.baseAddress!, byteCount: 4096) }
                    probe[earlier] ^= 0x5A
                    if after == before { silenced.append((fixed, offset)) }
                }
            }
        }
        #expect(silenced.isEmpty, "words that silenced earlier bytes: \(silenced.prefix(5).map { (String($0.word, radix: 16), $0.offset) })")
    }

    /// Every single-bit flip of a page's checksummed bytes, and of its page number and transaction
    /// id, changes the folded-multiply checksum.
    @Test func everySingleBitFlipChangesTheChecksum() {
        let seed = testSeed("bitFlips")
        var random = SeededGenerator(seed: seed)
        var page = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }
        // Mostly zeros after the heap's start, as a half-empty page is.
        for index in 600..<3000 { page[index] = 0 }
        let original = page.withUnsafeBytes { PageChecksum.foldedMultiply.of($0.baseAddress!, byteCount: 4096) }
        var unchanged: [Int] = []
        for bit in 0..<(4096 * 8) where !(bit / 8 >= PageLayout.checksumOffset && bit / 8 < PageLayout.kindOffset) {
            page[bit / 8] ^= 1 << (bit % 8)
            if page.withUnsafeBytes({ PageChecksum.foldedMultiply.of($0.baseAddress!, byteCount: 4096) }) == original { unchanged.append(bit) }
            page[bit / 8] ^= 1 << (bit % 8)
        }
        #expect(unchanged.isEmpty, "bits whose flip went unseen: \(unchanged.prefix(10))")
    }

    // MARK: Damage in a format-4 store

    /// A format-4 store: tree t (two levels), then a last commit that touches only tree u, so
    /// that a page of t is not one opening verifies. Returns a leaf of t and another leaf of t.
    func newFormatStore() throws -> (TemporaryDirectory, leaf: UInt64, sibling: UInt64) {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let t = try tx.createTree("t")
            for i in 0..<400 { try tx.put(String(format: "key %05d", i), "value \(i) " + String(repeating: "v", count: 40), in: t) }
        }
        try db.write { tx in try tx.put("only", "u", in: try tx.createTree("u")) }
        #expect(db.storeFormatVersion == 4)
        let root = try db.read { try $0.record(of: $0.tree("t")).root }
        db.close()
        let page = try readFile(dir.path + "/data", at: root * 4096, count: 4096)
        #expect(page[PageLayout.kindOffset] == PageKind.branch.rawValue)
        func child(_ index: Int) -> UInt64 {
            page.withUnsafeBytes { raw in
                let node = Int(raw.loadUnaligned(fromByteOffset: PageLayout.headerSize + 2 * index, as: UInt16.self))
                return raw.loadUnaligned(fromByteOffset: node, as: UInt64.self)
            }
        }
        return (dir, child(0), child(1))
    }

    /// Opens with checksum verification and reads everything: the damage must surface as a typed
    /// corrupt-page error, and `check()` must report it.
    func expectDamageReported(_ path: String, page: UInt64, checksumReason: Bool) throws {
        var options = DatabaseOptions()
        options.verifyChecksums = true
        let db = try Database(path: path, options: options)
        defer { db.close() }
        #expect(db.skippedCommit == nil)
        #expect {
            try db.read { _ = try content(of: $0) }
        } throws: { error in
            guard case StrataError.corruptPage(let number, let reason) = error else { return false }
            return number == page && (!checksumReason || reason == "checksum mismatch")
        }
        let report = try db.check()
        #expect(!report.isClean)
        #expect(report.problems.contains { $0.contains("page \(page)") }, "\(report.problems)")
    }

    @Test func aFlippedBitIsACorruptPage() throws {
        let (dir, leaf, _) = try newFormatStore()
        // The page's last byte: inside the value packed last in the heap, which no structure check sees.
        var page = try readFile(dir.path + "/data", at: leaf * 4096, count: 4096)
        page[4095] ^= 0x10
        try patchFile(dir.path + "/data", at: leaf * 4096, page)
        try expectDamageReported(dir.path, page: leaf, checksumReason: true)
    }

    @Test func aTornHalfPageIsACorruptPage() throws {
        let (dir, leaf, sibling) = try newFormatStore()
        // The first half arrived, the second half is the bytes that were there before: another leaf's.
        let other = try readFile(dir.path + "/data", at: sibling * 4096 + 2048, count: 2048)
        try patchFile(dir.path + "/data", at: leaf * 4096 + 2048, other)
        try expectDamageReported(dir.path, page: leaf, checksumReason: true)
    }

    @Test func aZeroedPageIsACorruptPage() throws {
        let (dir, leaf, _) = try newFormatStore()
        try patchFile(dir.path + "/data", at: leaf * 4096, [UInt8](repeating: 0, count: 4096))
        try expectDamageReported(dir.path, page: leaf, checksumReason: true)
    }

    /// A flipped bit in a page of the newest commit: opening verifies those pages and opens at the
    /// commit before, reporting the skip.
    @Test func aFlippedBitInTheNewestCommitSkipsIt() throws {
        let dir = TemporaryDirectory()
        let root = try { () throws -> UInt64 in
            // The handle goes away (its lock file closed) before the damage and the reopen.
            let db = try Database(path: dir.path)
            defer { db.close() }
            try db.write { tx in try tx.put("first", "commit", in: try tx.createTree("t")) }
            try db.write { tx in try tx.put("second", "commit", in: try tx.tree("t")) }
            return try db.read { try $0.record(of: $0.tree("t")).root }
        }()
        var page = try readFile(dir.path + "/data", at: root * 4096, count: 4096)
        page[4095] ^= 1
        try patchFile(dir.path + "/data", at: root * 4096, page)
        try waitUntilNobodyHasTheStoreOpen(dir.path)
        let reopened = try Database(path: dir.path)
        defer { reopened.close() }
        #expect(reopened.generation == 1)
        #expect(reopened.skippedCommit?.reason.contains("checksum mismatch") == true, "\(String(describing: reopened.skippedCommit))")
        #expect(try reopened.read { try $0.string("second", in: $0.tree("t")) } == nil)
    }

    // MARK: Stores created before format 3

    /// Writes a few commits into `path` (tree t with an overflow value, tree u).
    func writeCommits(_ db: Database, round: Int) throws {
        try db.write { tx in
            let t = try tx.openOrCreateTree("t")
            for i in 0..<300 { try tx.put(String(format: "key %05d", i), "value \(round) \(i)", in: t) }
            try tx.put("big", [UInt8](repeating: UInt8(round), count: 9000), in: t)
        }
        try db.write { tx in try tx.put("round \(round)", "done", in: try tx.openOrCreateTree("u")) }
    }

    @Test func aFormatTwoStoreOpensReadsCommitsAndVerifiesInFormatTwo() throws {
        let dir = TemporaryDirectory()
        try LegacyFormatStore.create(at: dir.path)
        do {
            let db = try Database(path: dir.path)
            defer { db.close() }
            #expect(db.storeFormatVersion == 2)
            try writeCommits(db, round: 1)
        }
        // Its pages carry format 2's checksums: the other hash does not match them.
        let root = try Database(path: dir.path, mode: .readOnly).read { try $0.record(of: $0.tree("t")).root }
        let page = try readFile(dir.path + "/data", at: root * 4096, count: 4096)
        page.withUnsafeBytes { raw in
            let stored = Page.Header(raw.baseAddress!).storedChecksum
            #expect(stored == PageChecksum.multiplyXorshift.of(raw.baseAddress!, byteCount: 4096))
            #expect(stored != PageChecksum.foldedMultiply.of(raw.baseAddress!, byteCount: 4096))
        }
        // A reader (verifying checksums), then a writer that commits more, then a verify.
        var options = DatabaseOptions()
        options.verifyChecksums = true
        let reader = try Database(path: dir.path, mode: .readOnly, options: options)
        #expect(try reader.read { try $0.string("key 00007", in: $0.tree("t")) } == "value 1 7")
        #expect(try reader.read { try $0.get("big", in: $0.tree("t"))?.bytes } == [UInt8](repeating: 1, count: 9000))
        let writer = try Database(path: dir.path, options: options)
        try writeCommits(writer, round: 2)
        #expect(try writer.read { try $0.string("key 00299", in: $0.tree("t")) } == "value 2 299")
        #expect(try writer.check().isClean)
        // The reader, open all along, follows the live writer's format-2 commits.
        #expect(try reader.read { try $0.string("key 00299", in: $0.tree("t")) } == "value 2 299")
        #expect(reader.storeFormatVersion == 2)
        reader.close()
        writer.close()
        #expect(try LegacyFormatStore.formatVersion(dir.path, slot: 0) == 2)
        #expect(try LegacyFormatStore.formatVersion(dir.path, slot: 1) == 2)
        // Reopening verifies the newest commit's pages with format 2's hash.
        let reopened = try Database(path: dir.path, options: options)
        defer { reopened.close() }
        #expect(reopened.skippedCommit == nil && reopened.generation == 4)
        #expect(try reopened.check().isClean)
        #expect(try reopened.read { try $0.string("round 2", in: $0.tree("u")) } == "done")
    }

    /// A page copy keeps the source's pages and so its format; a compacting copy rebuilds every
    /// page in format 4, the way to move an old store to the cheaper checksum.
    @Test func copiesOfAFormatTwoStore() throws {
        let dir = TemporaryDirectory()
        try LegacyFormatStore.create(at: dir.path)
        let db = try Database(path: dir.path)
        defer { db.close() }
        try writeCommits(db, round: 1)
        let expected = try db.read { try content(of: $0) }
        let copies = TemporaryDirectory()
        try db.copy(to: copies.parent + "/page")
        try db.copy(to: copies.parent + "/compact", compact: true)
        for (name, format) in [("page", UInt32(2)), ("compact", 4)] {
            var options = DatabaseOptions()
            options.verifyChecksums = true
            let copy = try Database(path: copies.parent + "/" + name, options: options)
            defer { copy.close() }
            #expect(copy.storeFormatVersion == format, "\(name)")
            #expect(try copy.read { try content(of: $0) } == expected, "\(name)")
            #expect(try copy.check().isClean, "\(name)")
            try copy.write { tx in try tx.put("after", "copy", in: try tx.tree("u")) }
            #expect(try copy.check().isClean, "\(name)")
        }
    }

    // MARK: Forged format versions

    /// Metas claiming the other page checksum than their pages carry: a typed error at open, never
    /// a store read with the wrong hash.
    @Test func aForgedFormatOverTheOtherChecksumIsATypedError() throws {
        for (legacy, forged) in [(true, UInt32(3)), (false, 2)] {
            let dir = TemporaryDirectory()
            if legacy { try LegacyFormatStore.create(at: dir.path) }
            do {
                let db = try Database(path: dir.path)
                defer { db.close() }
                try writeCommits(db, round: 1)
            }
            // One meta forged: the two metas disagree.
            try LegacyFormatStore.forgeFormatVersion(forged, dir.path, slots: [0])
            for mode in [AccessMode.readOnly, .readWrite] {
                #expect {
                    _ = try Database(path: dir.path, mode: mode)
                } throws: { error in
                    guard case StrataError.corruptMeta(_, let reason) = error else { return false }
                    return reason.contains("disagree on the format")
                }
            }
            // Both forged: each names pages of its commit, whose checksums do not verify.
            try LegacyFormatStore.forgeFormatVersion(forged, dir.path)
            for mode in [AccessMode.readOnly, .readWrite] {
                #expect {
                    _ = try Database(path: dir.path, mode: mode)
                } throws: { error in
                    guard case StrataError.corruptMeta(_, let reason) = error else { return false }
                    return reason.contains("checksum mismatch")
                }
            }
        }
    }

    /// A meta of a format this build does not know is refused as unsupported. A format-3 or -4
    /// meta's own checksum is computed as format 2's was, so an older Strata validates it, reads
    /// the newer version and refuses the store with `unsupportedFormat` too (not `corruptMeta`):
    /// this build refusing version 5 runs the code a format-3 build runs on version 4.
    @Test func unknownFormatsAreUnsupported() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(path: dir.path)
            defer { db.close() }
            try writeCommits(db, round: 1)
        }
        for slot: UInt64 in [0, 1] {
            let meta = try readFile(dir.path + "/data", at: slot * 4096, count: MetaPage.encodedSize)
            meta.withUnsafeBytes { raw in
                #expect(raw.loadUnaligned(fromByteOffset: MetaPage.Offset.formatVersion, as: UInt32.self) == 4)
                #expect(raw.loadUnaligned(fromByteOffset: MetaPage.checksumOffset, as: UInt64.self)
                        == Checksum.hash(raw.baseAddress!, count: MetaPage.checksumOffset))
            }
        }
        try LegacyFormatStore.forgeFormatVersion(5, dir.path)
        #expect(throws: StrataError.unsupportedFormat(path: dir.path, found: 5, supported: 4)) {
            _ = try Database(path: dir.path, mode: .readOnly)
        }
    }
}
