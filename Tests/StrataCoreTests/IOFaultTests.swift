import Foundation
import Testing
@_spi(Testing) @testable import StrataCore

/// A data file whose next call of one commit step fails: with ENOSPC or EIO, at once or after
/// writing part of the bytes (a failing disk), or by writing part and returning (a lying disk).
final class FaultyIO: DataFileIO, @unchecked Sendable {
    // Only the writer calls in (under the store's writer lock); the test arms it between commits.
    /// `metaSync` is the one sync of a commit (after its meta); `pagesSync` exists only in a commit
    /// too large for its meta to name its pages (see `Database.persist`).
    enum Step: String, CaseIterable, Sendable {
        case setSize, pages, pagesSync, meta, metaSync
    }

    enum Fault: String, CaseIterable, Sendable {
        case enospc, eio, shortThenENOSPC, shortThenEIO
        /// Writes part and returns as if all were written: breaks the `DataFileIO` contract.
        case shortSilently

        var code: Int32 { self == .enospc || self == .shortThenENOSPC ? ENOSPC : EIO }
        var isShort: Bool { self != .enospc && self != .eio }
    }

    let inner: any DataFileIO
    /// Fail the next call of `step`, `remaining` times in a row (then pass again).
    var armed: (step: Step, fault: Fault, remaining: Int)?
    private(set) var injected = 0
    /// Syncs that reached the file (the test resets it to count one commit's).
    var syncs = 0
    private var lastWriteWasMeta = false

    init(inner: any DataFileIO) { self.inner = inner }

    var path: String { inner.path }

    private func shouldFail(_ step: Step) -> Fault? {
        guard let armed, armed.step == step, armed.remaining > 0 else { return nil }
        self.armed?.remaining -= 1
        injected += 1
        return armed.fault
    }

    /// The error the engine's own file layer makes of `code` (ENOSPC becomes `diskFull`).
    private func error(_ operation: String, _ code: Int32) -> StrataError { PosixFile.error(operation, path, code) }

    func writeGathered(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        let total = buffers.reduce(0) { $0 + $1.count }
        lastWriteWasMeta = isMetaWrite(byteCount: total)
        guard let fault = shouldFail(lastWriteWasMeta ? .meta : .pages) else { return try inner.writeGathered(buffers, at: offset) }
        if fault.isShort {
            var joined: [UInt8] = []
            for buffer in buffers { joined += buffer }
            // Whole sectors of the start reach the file; a meta loses its tail (and checksum).
            let part = lastWriteWasMeta ? 100 : max(512, (total / 2) / 512 * 512)
            try joined.withUnsafeBytes { try inner.writeGathered([UnsafeRawBufferPointer(rebasing: $0[0..<part])], at: offset) }
            if fault == .shortSilently { return }
        }
        throw error("pwritev", fault.code)
    }

    func syncData() throws {
        guard let fault = shouldFail(lastWriteWasMeta ? .metaSync : .pagesSync) else {
            try inner.syncData()
            syncs += 1
            return
        }
        throw error("fdatasync", fault.code)
    }

    func setSize(_ size: UInt64) throws {
        guard let fault = shouldFail(.setSize) else { return try inner.setSize(size) }
        throw error("ftruncate", fault.code)
    }

    func size() throws -> UInt64 { try inner.size() }
}

/// Injected ENOSPC, EIO and short writes at every step of a commit, in every durability mode: the
/// commit throws `diskFull` (ENOSPC) or `io` (EIO), the store stays at its previous generation in
/// this handle and after reopening, and the next commit succeeds once the fault clears.
@Suite(.serialized) struct IOFaultTests {
    static func steps(_ durability: Durability) -> [FaultyIO.Step] {
        durability == .none ? [.setSize, .pages, .meta] : FaultyIO.Step.allCases
    }

    struct Store {
        let dir: TemporaryDirectory
        let db: Database
        let io: FaultyIO
        var options: DatabaseOptions
    }

    func openStore(_ durability: Durability, at dir: TemporaryDirectory = TemporaryDirectory()) throws -> Store {
        let box = IOBox<FaultyIO>()
        var options = DatabaseOptions()
        options.durability = durability
        box.install(in: &options) { FaultyIO(inner: $0) }
        let db = try Database(path: dir.path, options: options)
        return Store(dir: dir, db: db, io: try #require(box.io), options: options)
    }

    /// A change that needs every step of `step`'s kind of commit: new pages, a grown file (a value
    /// larger than any growth step so far), the meta and its sync; for `pagesSync`, more than a meta
    /// can name (3 MiB), so the pages are synced first.
    func bigChange(_ tx: WriteTransaction, _ tag: Int, for step: FaultyIO.Step? = nil) throws {
        let t = try tx.openOrCreateTree("t")
        for i in 0..<20 { try tx.put("key \(tag) \(i)", "value \(tag) \(i)", in: t) }
        let base = step == .pagesSync ? 3 << 20 : 1 << 20
        try tx.put("big \(tag)", [UInt8](repeating: UInt8(tag % 256), count: base + 4096 * (tag % 7)), in: t)
    }

    func matchesError(_ error: any Error, _ fault: FaultyIO.Fault, path: String) -> Bool {
        switch (error as? StrataError, fault.code) {
        case (.diskFull(let errorPath)?, ENOSPC): return errorPath == path
        case (.io(_, let errorPath, let code)?, EIO): return errorPath == path && code == EIO
        default: return false
        }
    }

    @Test(arguments: [Durability.full, .none])
    func failedCommitLeavesThePreviousGeneration(durability: Durability) throws {
        var faults = 0
        for step in IOFaultTests.steps(durability) {
            for fault in FaultyIO.Fault.allCases where fault != .shortSilently && (!fault.isShort || step == .pages || step == .meta) {
                let context = "\(durability) \(step) \(fault)"
                var store = try openStore(durability)
                try store.db.write { tx in try bigChange(tx, 1) }
                let before = store.db.generation
                let expected = try store.db.read { try content(of: $0) }

                store.io.armed = (step, fault, 1)
                #expect {
                    try store.db.write { tx in try bigChange(tx, 2, for: step) }
                } throws: { error in
                    matchesError(error, fault, path: store.dir.path + "/data")
                }
                #expect(store.io.injected == 1, "\(context): the fault was not reached")
                faults += store.io.injected
                // This handle: still the previous generation, same content, clean.
                #expect(store.db.generation == before, "\(context)")
                #expect(try store.db.read { try content(of: $0) } == expected, "\(context)")
                #expect(try store.db.check().isClean, "\(context)")
                // Reopened: the same.
                store.db.close()
                let dir = store.dir
                store = try openStore(durability, at: dir)
                #expect(store.db.generation == before, "\(context): reopened at \(store.db.generation), the failed commit was \(before + 1)")
                #expect(try store.db.read { try content(of: $0) } == expected, "\(context): reopened content")
                #expect(try store.db.check().isClean, "\(context): reopened")
                // The fault cleared: the next commit succeeds, with one flush.
                store.io.syncs = 0
                try store.db.write { tx in try bigChange(tx, 3) }
                #expect(try store.db.read { $0.generation } == store.db.generation)
                #expect(try store.db.check().isClean, "\(context): after the next commit")
                #expect(try store.db.read { try $0.get("big 3", in: $0.tree("t"))?.count } == (1 << 20) + 4096 * 3)
                #expect(store.io.syncs == (durability == .none ? 0 : 1), "\(context): the commit after the fault synced \(store.io.syncs) times")
            }
        }
        print("[ioFaults] \(durability): \(faults) faults injected at \(IOFaultTests.steps(durability).count) commit steps")
    }

    @Test func sameHandleRecoversAfterRepeatedFaults() throws {
        var store = try openStore(.full)
        try store.db.write { tx in try bigChange(tx, 1) }
        var faults = 0
        for (index, step) in FaultyIO.Step.allCases.enumerated() {
            let before = store.db.generation
            // The disk stays full for three attempts, then frees up.
            store.io.armed = (step, index % 2 == 0 ? .enospc : .shortThenENOSPC, 3)
            // Each failed commit consumes one or two faults (a meta whose sync failed is wiped,
            // and that wipe is synced too), so retry until the disk has room again.
            var failures = 0
            while failures < 3 {
                do {
                    try store.db.write { tx in try bigChange(tx, 10 + index, for: step) }
                    break
                } catch {
                    #expect(error as? StrataError == .diskFull(path: store.dir.path + "/data"), "\(step) attempt \(failures)")
                    #expect(store.db.generation == before)
                    failures += 1
                }
            }
            #expect(failures >= 2, "\(step): the full disk failed only \(failures) commit(s)")
            if failures == 3 { try store.db.write { tx in try bigChange(tx, 10 + index, for: step) } }
            #expect(store.db.generation == before + 1)
            #expect(try store.db.check().isClean, "\(step)")
            faults += 3
        }
        let dir = store.dir
        store.db.close()
        store = try openStore(.full, at: dir)
        #expect(try store.db.check().isClean)
        print("[ioFaults] one handle: \(faults) faults injected, recovered after each")
    }

    /// A double that writes part and reports success breaks the `DataFileIO` contract (`PosixFile`
    /// finishes short writes). The engine cannot see it at commit; what matters is that the damage
    /// is then reported, never a crash: a short meta, or short pages that the meta names, make the
    /// store fall back to the previous commit when reopened.
    @Test func silentShortWritesAreReportedNotCrashed() throws {
        var notes: [String] = []
        for step in [FaultyIO.Step.pages, .meta] {
            var store = try openStore(.full)
            try store.db.write { tx in try bigChange(tx, 1) }
            let before = store.db.generation
            store.io.armed = (step, .shortSilently, 1)
            try store.db.write { tx in try bigChange(tx, 2) }
            do {
                let report = try store.db.check()
                notes.append("\(step): this handle's check \(report.isClean ? "clean" : "found \(report.problems.count) problem(s)")")
            } catch {
                notes.append("\(step): this handle's check threw \(error)")
                #expect(error is StrataError)
            }
            let dir = store.dir
            store.db.close()
            do {
                store = try openStore(.full, at: dir)
                let report = try store.db.check()
                notes.append("\(step): reopened at \(store.db.generation) (before \(before)), check \(report.isClean ? "clean" : "found \(report.problems.count) problem(s)")")
                #expect(store.db.generation == before && report.isClean, "\(step)")
            } catch {
                notes.append("\(step): reopening threw \(error)")
                #expect(error is StrataError)
            }
        }
        for note in notes { print("[ioFaults] silent short write, \(note)") }
    }

    /// A real short write: under RLIMIT_FSIZE the kernel's pwritev stops at the limit and the rest
    /// fails with EFBIG (`strata-child fsize-writer`). The commit fails with a typed error, the store
    /// stays put, and once the limit is lifted the same commit succeeds.
    @Test func kernelShortWriteUnderAFileSizeLimit() throws {
        let dir = TemporaryDirectory()
        do {
            let db = try Database(path: dir.path)
            try db.write { tx in try tx.put("k", "v", in: try tx.createTree("t")) }
        }
        let child = try ChildProcess(["fsize-writer", dir.path])
        let limited = child.waitFor("limited", timeout: 30) ?? "nothing"
        let unlimited = child.waitFor("unlimited", timeout: 30) ?? "nothing"
        child.waitForExit()
        print("[ioFaults] file-size limit: \(limited); \(unlimited)")
        #expect(limited.hasPrefix("limited failed 1 ") && limited.contains("errno \(EFBIG)"), "\(limited)")
        #expect(unlimited == "unlimited committed 2 from 1 value ok clean true")
        let db = try Database(path: dir.path, mode: .readOnly)
        #expect(db.generation == 2)
        #expect(try db.check().isClean)
    }
}
