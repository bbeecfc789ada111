// The engine-neutral store interface the workloads are written against.
// Each engine implements it in its own executable (Strata in strata-bench, LMDB and SQLite in
// Tools/PeerBench); the workload code is shared, so every engine runs exactly the same sequence
// of operations.

/// An engine's name: `--engine` value, the `"engine"` field of every JSON line, and the prefix
/// of its store directories.
public struct EngineKind: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    public var description: String { rawValue }
}

/// How a store is opened.
public struct OpenOptions: Sendable {
    /// Create the store (its directory already exists and is empty).
    public var create = false
    /// Durable commits: a commit that returned survives power loss (each engine's fully synced
    /// mode). When false, commits do not sync at all.
    public var durable = true
    /// Reader-only handle (child reader / observer processes).
    public var readOnly = false
    /// How an observer waits for commits, for engines with more than one way (`--notify-schedule`).
    public var notifySchedule = "standard"

    public init(create: Bool = false, durable: Bool = true, readOnly: Bool = false, notifySchedule: String = "standard") {
        self.create = create
        self.durable = durable
        self.readOnly = readOnly
        self.notifySchedule = notifySchedule
    }
}

/// One engine's key-value store. Errors are fatal: implementations report them with
/// `BenchMain.fatal` (which exits) instead of throwing.
public protocol KVStore: AnyObject {
    static var kind: EngineKind { get }

    /// Opens the store that lives in `directory` (one directory per store).
    init(directory: String, options: OpenOptions)

    // Write transactions.
    func beginWrite()
    func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer)
    func commitWrite()

    // One long read transaction with many gets / a full scan.
    func beginRead()
    /// Returns the value for `key`, valid until the next `get` or `endRead`.
    func get(_ key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer?
    /// Visits every record in key order inside the current read transaction; returns the count.
    func scan(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void) -> Int
    func endRead()

    /// One complete read transaction around a single get (begin, get, end).
    func readOnce<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> R) -> R

    /// A number that changes whenever another process commits.
    func commitToken() -> UInt64

    /// Waits until the commit token differs from `token` and returns it, or nil after `timeout`
    /// seconds. The default busy-polls `commitToken()` (what LMDB and SQLite users do); engines
    /// with their own notification mechanism override it.
    func waitForCommit(after token: UInt64, timeout: Double) -> UInt64?

    func close()
}

extension KVStore {
    /// Begin, get, end (engines with a cheaper single-get path override it).
    public func readOnce<R>(_ key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        beginRead()
        defer { endRead() }
        return body(get(key))
    }

    public func waitForCommit(after token: UInt64, timeout: Double) -> UInt64? {
        let deadline = Sys.monoNanos() &+ UInt64(max(0, timeout) * 1e9)
        while true {
            for _ in 0..<256 {
                let current = commitToken()
                if current != token { return current }
            }
            if Sys.monoNanos() >= deadline { return nil }
        }
    }
}
