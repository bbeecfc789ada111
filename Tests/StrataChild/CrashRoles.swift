import Foundation
@_spi(Testing) import StrataCore
import StrataTestFixtures

// MARK: Crash campaign

/// The durability argument of the writer roles: 0 full, 1 full (it was `noMetaSync`, which one
/// flush per commit made the same as full; tests still pass 1), 2 none.
func durabilityArgument(_ argument: String) -> Durability {
    argument == "2" ? .none : .full
}

/// The steps of a commit at which `KillingIO` can stop the process (see `Database.persist`):
/// resize, page writes, meta write, then the one sync ("meta-sync"). A commit too large for its
/// meta to name its pages syncs them before the meta ("pages-sync").
enum CommitStep: String {
    case setSize = "setsize", pages, pagesSync = "pages-sync", meta, metaSync = "meta-sync"
}

/// Wraps the data file and SIGKILLs the process at the `target`-th call of `step`: before the call,
/// after it, or (writes only) in the middle, having written part of the bytes.
final class KillingIO: DataFileIO, @unchecked Sendable {
    // Only the writer (under the store's writer lock) calls in: no two calls overlap.
    private let inner: any DataFileIO
    private let step: CommitStep
    private let phase: String
    private let target: Int
    private var calls = 0
    private var lastWriteWasMeta = false

    init(inner: any DataFileIO, step: CommitStep, phase: String, target: Int) {
        self.inner = inner
        self.step = step
        self.phase = phase
        self.target = target
    }

    var path: String { inner.path }

    /// Counts a call of `kind`; true if this is the one to die at.
    private func isTarget(_ kind: CommitStep) -> Bool {
        guard kind == step else { return false }
        calls += 1
        return calls == target
    }

    private func die() -> Never {
        say("kill \(step.rawValue) \(phase) \(target)")
        kill(getpid(), SIGKILL)
        while true { pause() }
    }

    func writeGathered(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        let total = buffers.reduce(0) { $0 + $1.count }
        lastWriteWasMeta = isMetaWrite(byteCount: total)
        guard isTarget(lastWriteWasMeta ? .meta : .pages) else { return try inner.writeGathered(buffers, at: offset) }
        switch phase {
        case "before": die()
        case "mid":
            // Part of the bytes reach the file (a crash in the middle of a gathered write).
            var joined = [UInt8]()
            for buffer in buffers { joined += buffer }
            let part = max(1, total / 2 - 37)
            try joined.withUnsafeBytes { try inner.writeGathered([UnsafeRawBufferPointer(rebasing: $0[0..<part])], at: offset) }
            die()
        default:
            try inner.writeGathered(buffers, at: offset)
            die()
        }
    }

    func syncData() throws {
        guard isTarget(lastWriteWasMeta ? .metaSync : .pagesSync) else { return try inner.syncData() }
        if phase != "after" { die() }
        try inner.syncData()
        die()
    }

    func setSize(_ size: UInt64) throws {
        guard isTarget(.setSize) else { return try inner.setSize(size) }
        if phase != "after" { die() }
        try inner.setSize(size)
        die()
    }

    func size() throws -> UInt64 { try inner.size() }
}

/// The crash-loop workload (commit i sets counter = i, adds item i, deletes item i-50) with a
/// `KillingIO` that ends the process inside a commit. With "grow", every commit also adds a
/// 100 KB value to the tree "ballast", so the file keeps growing (the resize step recurs); with
/// "huge", a 3 MB value, more than a meta names (its pages are synced before the meta).
/// Arguments: STORE DURABILITY(0 full, 1 full, 2 none) STEP PHASE N [grow|huge].
func killWriter(path: String, arguments: [String]) throws {
    var options = DatabaseOptions()
    options.durability = durabilityArgument(arguments[2])
    guard let step = CommitStep(rawValue: arguments[3]) else { fail("unknown step \(arguments[3])") }
    let phase = arguments[4]
    let target = Int(arguments[5]) ?? 1
    let ballast = arguments.count > 6 ? (arguments[6] == "huge" ? 3_000_000 : arguments[6] == "grow" ? 100_000 : 0) : 0
    options.dataFileIO = { KillingIO(inner: $0, step: step, phase: phase, target: target) }
    let db = try Database(path: path, options: options)
    var next = try CrashLoop.nextCommit(in: db)
    say("start \(next - 1)")
    // Bounded: a kill that never comes (a step this durability does not have) ends the run.
    for _ in 0..<400 {
        let i = next
        try CrashLoop.commit(i, to: db, ballast: ballast)
        say("committed \(i)")
        next += 1
    }
    say("no kill")
}

// MARK: A real short write

/// Commits under RLIMIT_FSIZE so the kernel writes short (pwritev stops at the limit) and then fails
/// with EFBIG; then lifts the limit and commits again. Reports each outcome.
func fileSizeLimitedWriter(path: String) throws {
    signal(SIGXFSZ, SIG_IGN)
    var options = DatabaseOptions()
    options.durability = .full
    let db = try Database(path: path, options: options)
    let before = db.generation
    let pageCount = try db.read { $0.pageCount }
    let limit = (pageCount + 1) * UInt64(db.pageSize) + 1000
    var rlim = rlimit()
    getrlimit(Int32(RLIMIT_FSIZE.rawValue), &rlim)
    let original = rlim
    rlim.rlim_cur = rlim_t(limit)
    guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &rlim) == 0 else { fail("setrlimit: \(errno)") }
    // A 5-page overflow value allocated at the end of the file crosses the limit mid-write.
    let big = [UInt8](repeating: 0x5A, count: 5 * db.pageSize - 100)
    do {
        try db.write { tx in try tx.put("big", big, in: try tx.openOrCreateTree("t")) }
        say("limited committed \(db.generation)")
    } catch let error as StrataError {
        say("limited failed \(db.generation) \(error)")
    }
    var restored = original
    guard setrlimit(Int32(RLIMIT_FSIZE.rawValue), &restored) == 0 else { fail("setrlimit: \(errno)") }
    try db.write { tx in try tx.put("big", big, in: try tx.openOrCreateTree("t")) }
    let stored = try db.read { try $0.get("big", in: $0.tree("t"))?.bytes == big }
    say("unlimited committed \(db.generation) from \(before) value \(stored ? "ok" : "wrong") clean \(try db.check().isClean)")
}
