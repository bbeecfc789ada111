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
    /// Data pages are synced, then the meta page is written and synced: a commit that returned
    /// survives power loss. Two `fdatasync` calls per commit.
    case full
    /// Data pages are synced, the meta is not: after a power loss the store opens at the last
    /// commit whose meta reached the disk (possibly the previous one), always consistent.
    case noMetaSync
    /// Nothing is synced: survives process crashes; a power loss may lose recent commits and, if the
    /// disk reorders writes, can leave the newest meta pointing at pages that never reached it
    /// (detected by page checksums; the store then needs a restore from a backup).
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

public struct DatabaseOptions: Sendable {
    /// Page size for a new store (power of two, 4096...32768). An existing store keeps its own.
    public var pageSize: Int = max(PageLayout.minimumPageSize, min(PageLayout.maximumPageSize, Int(sysconf(Int32(_SC_PAGESIZE)))))
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
    /// The process umask applies, as to any file created; an existing store keeps its modes.
    public var fileMode: mode_t = 0o600
    public var writerLockWait: WriterLockWait = .fail
    /// Verify the checksum of every page a transaction reads from the file (about 0.5 µs per 4 KiB
    /// page). Off by default: page structure is always validated on read, and `check()` verifies
    /// every checksum; turn it on where a flipped bit in a value must never be returned.
    public var verifyChecksums = false
    /// When set, the writer checks (at most once a second, as a write transaction begins) for live
    /// readers that have held one snapshot longer than this many seconds and reports them to
    /// `onLongLivedReaders`: such a reader keeps the file from reusing space.
    public var longLivedReaderLimit: Double?
    public var onLongLivedReaders: (@Sendable ([ReaderInfo]) -> Void)?
    /// Test seam: wraps the data file's write path (fault injection, power-loss simulation). The
    /// closure receives the real file and returns what the engine writes through.
    @_spi(Testing) public var dataFileIO: (@Sendable (any DataFileIO) -> any DataFileIO)?

    public init() {}
}
