// Child roles for the fault-tolerance tests (Tests/StrataCoreTests/README.md, "Fault tolerance"):
// a writer that kills itself inside commit, a writer under a file-size limit, the fuzz exerciser,
// bank-transfer soak processes, churning readers and a privilege-dropping opener.
import Foundation
@_spi(Testing) import StrataCore
import StrataTestFixtures

/// Runs `role` if it is one of the fault roles; returns false if it is not.
func runFaultRole(_ role: String, _ arguments: [String]) throws -> Bool {
    let path = arguments[1]
    switch role {
    case "kill-writer": try killWriter(path: path, arguments: arguments)
    case "fsize-writer": try fileSizeLimitedWriter(path: path)
    case "fuzz-exercise": fuzzExercise(log: arguments.count > 2 ? arguments[2] : nil)
    case "bank-writer": try bankWriter(path: path, arguments: arguments)
    case "bank-reader": try bankReader(path: path, arguments: arguments)
    case "churn-reader": try churnReader(path: path)
    case "pin-until": try pinUntilTold(path: path)
    case "open-as-nobody": openAsNobody(path: path, arguments: arguments)
    case "read-only-reader": readOnlyReader(path: path)
    default: return false
    }
    return true
}

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

// MARK: Fuzz exerciser

/// Reads lines "INDEX STORE" and, for each store, opens it, reads it every way, checks it and writes
/// to it, printing "begin INDEX" first and "done INDEX OUTCOME" after. Any error must be a
/// `StrataError`; a crash or a hang is seen by the parent as a missing "done".
func fuzzExercise(log: String?) {
    // A crash report (the runtime's backtrace) goes to the log, for the parent to quote.
    if let log {
        let fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd >= 0 { dup2(fd, STDERR_FILENO); close(fd) }
    }
    while let line = readLine() {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { continue }
        say("begin \(parts[0])")
        say("done \(parts[0]) \(exerciseStore(parts[1]))")
    }
}

/// Everything a user could do with a store; returns a summary of what worked.
func exerciseStore(_ path: String) -> String {
    var outcome: [String] = []
    var untyped: [String] = []
    func attempt(_ label: String, _ body: () throws -> Void) {
        do {
            try body()
            outcome.append("\(label):ok")
        } catch is StrataError {
            outcome.append("\(label):err")
        } catch {
            untyped.append("\(label): \(error)")
        }
    }
    var probes = SeededGenerator(seed: path.utf8.reduce(5381) { ($0 &* 33) &+ UInt64($1) })
    func readAll(_ db: Database) {
        attempt("read") {
            try db.read { tx in
                for name in try tx.treeNames() {
                    let tree = try tx.tree(name)
                    _ = try tx.count(tree)
                    var keys: [[UInt8]] = []
                    var total = 0
                    try tx.scan(tree) { key, value in
                        if keys.count < 64 { keys.append(key.bytes) }
                        total &+= value.count
                        return true
                    }
                    try tx.scan(tree, reverse: true) { _, value in total &+= value.count; return true }
                    for key in keys { _ = try tx.get(key, in: tree) }
                    for i in 0..<40 { _ = try tx.get(String(format: "key %05d", i * 37), in: tree) }
                    let cursor = try tx.cursor(tree)
                    for _ in 0..<20 {
                        let probe = String(format: "key %05d", Int.random(in: 0..<2000, using: &probes))
                        if try cursor.seek(probe) {
                            _ = try cursor.key()
                            _ = try cursor.value()
                            for _ in 0..<3 { guard try cursor.next() else { break } }
                            for _ in 0..<6 { guard try cursor.previous() else { break } }
                        }
                        if try cursor.seekLast(atOrBefore: probe) { _ = try cursor.value() }
                    }
                    if try cursor.last() { while try cursor.previous() { _ = try cursor.value() } }
                    try tx.scan(tree, from: Array("key 00500".utf8), to: Array("key 00900".utf8), reverse: true) { _, _ in true }
                }
            }
        }
    }
    do {
        var options = DatabaseOptions()
        options.durability = .none
        let db = try Database(path: path, options: options)
        outcome.append("open:ok")
        readAll(db)
        attempt("check") { if !(try db.check().isClean) { throw StrataError.corruptPage(page: 0, reason: "check found problems") } }
        attempt("write") {
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                for i in 0..<30 { try tx.put(String(format: "key %05d", i * 53), "fuzz \(i)", in: t) }
                for i in 0..<30 { try tx.delete(String(format: "key %05d", i * 41 + 7), in: t) }
                try tx.put("fuzz big", [UInt8](repeating: 7, count: 9000), in: t)
                try tx.put("key 00100", [UInt8](repeating: 9, count: 5000), in: t)
            }
        }
        attempt("drop") {
            try db.write { tx in
                if let u = try tx.treeIfPresent("u") { try tx.dropTree(u) }
                let fresh = try tx.openOrCreateTree("fresh")
                for i in 0..<200 { try tx.put("f \(i)", [UInt8](repeating: UInt8(i % 256), count: i * 3), in: fresh) }
            }
        }
        attempt("clear") {
            try db.write { tx in
                if let t = try tx.treeIfPresent("t") {
                    for i in 0..<400 { try tx.delete(String(format: "key %05d", i), in: t) }
                }
            }
        }
        readAll(db)
        attempt("check2") { if !(try db.check().isClean) { throw StrataError.corruptPage(page: 0, reason: "check found problems") } }
        db.close()
        let reader = try Database(path: path, mode: .readOnly)
        readAll(reader)
    } catch is StrataError {
        outcome.append("open:err")
    } catch {
        untyped.append("open: \(error)")
    }
    if !untyped.isEmpty { return "UNTYPED " + untyped.joined(separator: "; ") }
    return outcome.joined(separator: ",")
}

// MARK: Bank-transfer soak

func accountKey(_ i: Int) -> String { String(format: "acct-%05d", i) }

/// Balance in the first 8 bytes, then padding so the tree has several levels.
func encodeBalance(_ balance: Int64) -> [UInt8] {
    withUnsafeBytes(of: balance.littleEndian) { Array($0) } + [UInt8](repeating: 0xB0, count: 40)
}

func decodeBalance(_ bytes: ByteView) -> Int64? {
    guard bytes.count == 48 else { return nil }
    return bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
}

/// Moves money between accounts until told to stop (stdin closes or "stop"), then prints
/// "transfers T commits C". Arguments: STORE ACCOUNTS SEED DURABILITY. Creates the accounts with
/// 1000 each if the tree does not exist.
func bankWriter(path: String, arguments: [String]) throws {
    let accounts = Int(arguments[2]) ?? 500
    var random = SeededGenerator(seed: UInt64(arguments[3]) ?? 1)
    var options = DatabaseOptions()
    options.durability = durabilityArgument(arguments[4])
    let db = try Database(path: path, options: options)
    try db.write { tx in
        if try tx.treeIfPresent("bank") == nil {
            let bank = try tx.createTree("bank")
            for i in 0..<accounts { try tx.put(accountKey(i), encodeBalance(1000), in: bank) }
        }
    }
    let stop = StopFlag()
    Thread.detachNewThread {
        while let line = readLine(), line != "stop" {}
        stop.set()
    }
    say("ready")
    var transfers = 0, commits = 0
    while !stop.isSet {
        try db.write { tx in
            let bank = try tx.tree("bank")
            // Mostly a few transfers; sometimes a large transaction that touches many pages.
            let count = Int.random(in: 0..<10, using: &random) == 0 ? 200 : Int.random(in: 1...5, using: &random)
            for _ in 0..<count {
                let from = Int.random(in: 0..<accounts, using: &random)
                let to = Int.random(in: 0..<accounts, using: &random)
                guard let source = try tx.get(accountKey(from), in: bank).flatMap(decodeBalance),
                      let target = try tx.get(accountKey(to), in: bank).flatMap(decodeBalance) else {
                    throw StrataError.misuse("account missing")
                }
                let amount = Int64.random(in: 0...max(0, source), using: &random)
                if from == to { continue }
                try tx.put(accountKey(from), encodeBalance(source - amount), in: bank)
                try tx.put(accountKey(to), encodeBalance(target + amount), in: bank)
                transfers += 1
            }
        }
        commits += 1
        if commits % 200 == 0 { say("progress \(commits)") }
    }
    say("transfers \(transfers) commits \(commits)")
}

/// Reads every balance in one snapshot, again and again, verifying the total, until stdin says
/// "stop". Prints "violation ..." for any snapshot whose sum is wrong and "checks N violations V".
/// Arguments: STORE ACCOUNTS TOTAL.
func bankReader(path: String, arguments: [String]) throws {
    let accounts = Int(arguments[2]) ?? 500
    let total = Int64(arguments[3]) ?? Int64(accounts) * 1000
    var db = try Database(path: path, mode: .readOnly)
    let stop = StopFlag()
    Thread.detachNewThread {
        while let line = readLine(), line != "stop" {}
        stop.set()
    }
    say("ready")
    var checks = 0, violations = 0, round = 0
    var generations = Set<UInt64>()
    while !stop.isSet {
        round += 1
        try db.read { tx in
            guard let bank = try tx.treeIfPresent("bank") else { return }
            var sum: Int64 = 0, seen = 0
            // Alternate the three ways of reading a snapshot: scan, reverse cursor, point gets.
            switch round % 3 {
            case 0:
                try tx.scan(bank) { _, value in
                    sum += decodeBalance(value) ?? Int64.min / 4
                    seen += 1
                    return true
                }
            case 1:
                let cursor = try tx.cursor(bank)
                var more = try cursor.last()
                while more {
                    sum += decodeBalance(try cursor.value()) ?? Int64.min / 4
                    seen += 1
                    more = try cursor.previous()
                }
            default:
                for i in 0..<accounts {
                    if let value = try tx.get(accountKey(i), in: bank) {
                        sum += decodeBalance(value) ?? Int64.min / 4
                        seen += 1
                    }
                }
            }
            checks += 1
            generations.insert(tx.generation)
            if sum != total || seen != accounts {
                violations += 1
                say("violation generation \(tx.generation) sum \(sum) accounts \(seen)")
            }
        }
        // Now and then a reader reopens, as a restarted process would.
        if round % 500 == 0 { db = try Database(path: path, mode: .readOnly) }
    }
    say("checks \(checks) violations \(violations) generations \(generations.count)")
}

final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    func set() { lock.withLock { stopped = true } }
    var isSet: Bool { lock.withLock { stopped } }
}

// MARK: Readers under stress

/// Opens the store and begins and ends read transactions forever; prints "ready" after the first.
func churnReader(path: String) throws {
    let db = try Database(path: path, mode: .readOnly)
    var reads = 0
    while true {
        try db.read { tx in
            if let t = try tx.treeIfPresent("t") { _ = try tx.get("key 1", in: t) }
        }
        reads += 1
        if reads == 1 { say("ready \(getpid())") }
    }
}

/// Holds one snapshot until a line arrives on stdin, then ends it, prints "released" and idles.
func pinUntilTold(path: String) throws {
    let db = try Database(path: path, mode: .readOnly)
    let tx = try db.beginRead()
    say("pinned \(tx.generation)")
    _ = readLine()
    tx.end()
    say("released")
    while true { sleep(1) }
}

// MARK: Permissions

/// Drops to uid/gid 65534 (when running as root) and opens the store in the given mode
/// ("rw" or "ro"); prints "opened" or "error DESCRIPTION".
func openAsNobody(path: String, arguments: [String]) {
    if geteuid() == 0 {
        guard setgid(65534) == 0, setuid(65534) == 0 else { fail("cannot drop privileges: errno \(errno)") }
    }
    do {
        _ = try Database(path: path, mode: arguments[2] == "rw" ? .readWrite : .readOnly)
        say("opened")
    } catch let error as StrataError {
        say("refused \(error)")
    } catch {
        say("untyped \(error)")
    }
}
