import Glibc

/// How a handle opens a store.
public enum AccessMode: Sendable, Equatable {
    /// The one writer. Takes the writer lock for the life of the handle.
    case readWrite
    /// A reader: cannot write, does not take the writer lock.
    case readOnly
}

/// What a commit waits for before it returns. Every mode keeps the store consistent after a
/// process crash (the kernel still writes what was handed to it); they differ on power loss.
public enum Durability: Sendable, Equatable {
    /// The commit's pages, its meta and any file growth are written, then synced with one
    /// `fdatasync`: a commit that returned survives power loss, and a commit cut short by one is
    /// detected when the store is opened (the meta names its pages, which are verified) and the
    /// store opens at the commit before it. A commit of more than 2 MiB syncs twice (its pages,
    /// then its meta).
    case full
    /// Kept so existing code compiles: since format 2 it is `.full`. It used to skip the meta's
    /// sync and risk losing the last commit; one flush now covers pages and meta together, so
    /// there is nothing left to save.
    @available(*, deprecated, renamed: "full", message: "one flush per commit now covers pages and meta together; this mode is .full")
    case noMetaSync
    /// Nothing is synced: survives process crashes. A power loss may lose recent commits; a newest
    /// commit whose pages did not all arrive is detected at open and skipped, but if the disk
    /// reorders writes across commits, older pages may be missing too (found by page checksums:
    /// opening reports the damage, or `check()` does; the store then needs a restore).
    case none
}

/// What to do when another handle holds the writer lock.
public enum WriterLockWait: Sendable, Equatable {
    /// Fail at once with `StrataError.writerLocked` naming the holder's pid.
    case fail
    /// Wait up to this many seconds, then fail with `writerLockTimedOut`.
    case wait(seconds: Double)
    /// Wait until the writer closes or dies (a standby writer).
    case forever
}

/// How `Database(path:mode:options:)` opens or creates a store. Every property has a default.
/// ```swift
/// var options = DatabaseOptions()
/// options.durability = .none
/// options.writerLockWait = .wait(seconds: 5)
/// let db = try Database(path: "cache.strata", options: options)
/// ```
public struct DatabaseOptions: Sendable {
    /// Page size for a new store (power of two, 4096...32768). An existing store keeps its own.
    public var pageSize: Int = max(PageLayout.minimumPageSize, min(PageLayout.maximumPageSize, Int(sysconf(Int32(_SC_PAGESIZE)))))
    /// What a commit waits for before it returns (see `Durability`). Default: `.full`.
    public var durability: Durability = .full
    /// Create the store if it does not exist (read-write only).
    public var createIfMissing = true
    /// Reader slots in a new lock file (the table is sized when the first handle opens the store).
    public var readerSlots = 256
    /// Permissions of the files a new store is created with (`data`, `lock`); its directory gets
    /// the same plus search permission wherever the files grant read (0o600 -> directory 0o700).
    /// The default, 0o600, lets only the creating user open the store. For a store that other
    /// users, a group or an app extension may read, create it with 0o644 (directory 0o755) or 0o640
    /// (0o750): such a reader opens it `.readOnly` and needs no write permission (see `Database`).
    /// The process umask applies, as to any file created; an existing store keeps its modes (a
    /// lock file missing from an existing store is created with its data file's modes).
    public var fileMode: mode_t = 0o600
    /// What a read-write open does when another handle holds the writer lock. Default: `.fail`
    /// (`StrataError.writerLocked`); `.wait(seconds:)` ends in `StrataError.writerLockTimedOut`.
    public var writerLockWait: WriterLockWait = .fail
    /// Verify the checksum of every page a transaction reads from the file (about 2.4k instructions
    /// per 4 KiB page in a format-3 store, 5.5k in a format-2 one). Off by default: page structure
    /// is always validated on read, and `check()` verifies every checksum; turn it on where a
    /// flipped bit in a value must never be returned.
    public var verifyChecksums = false
    /// When set, the writer checks (at most once a second, as a write transaction begins) for live
    /// readers that have held one snapshot longer than this many seconds and reports them to
    /// `onLongLivedReaders`: such a reader keeps the file from reusing space.
    public var longLivedReaderLimit: Double?
    /// Called by the writer, as a write transaction begins, with the readers that have held a snapshot
    /// longer than `longLivedReaderLimit`; runs only when both are set.
    public var onLongLivedReaders: (@Sendable ([ReaderInfo]) -> Void)?
    /// Test seam: wraps the data file's write path (fault injection, power-loss simulation). The
    /// closure receives the real file and returns what the engine writes through.
    @_spi(Testing) public var dataFileIO: (@Sendable (any DataFileIO) -> any DataFileIO)?

    /// The default options.
    public init() {}
}
