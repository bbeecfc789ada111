import Glibc

/// Every failure the engine reports. Each case carries what a person needs to act on it, and
/// `description` says it in one sentence.
public enum StrataError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The path exists but is not a Strata store (foreign file, wrong magic, missing data file).
    case notAStore(path: String, reason: String)
    /// The store was written by a format this build does not understand (usually a newer Strata).
    case unsupportedFormat(path: String, found: UInt32, supported: UInt32)
    /// The data file is shorter than its newest valid meta page says.
    case truncatedFile(path: String, expectedBytes: UInt64, actualBytes: UInt64)
    /// Neither meta page validates: the store cannot be opened at any committed generation.
    case corruptMeta(path: String, reason: String)
    /// A page read from disk is inconsistent (bad checksum, bad bounds, wrong page number, cycle...).
    case corruptPage(page: UInt64, reason: String)
    case keyTooLarge(size: Int, maximum: Int)
    case valueTooLarge(size: Int, maximum: Int)
    /// A write was attempted through a read-only handle.
    case readOnly
    /// The handle (or the transaction) was already closed.
    case closed(what: String)
    /// Every slot of the reader table is held by a live reader.
    case readerTableFull(capacity: Int)
    /// Another handle holds the writer lock. `holderPID` is the writer the lock file names if that
    /// process is alive, else 0 (unknown).
    case writerLocked(path: String, holderPID: Int32)
    /// The store's lock file was deleted or replaced while a writer still has the store open (it
    /// holds the data file's writer lock): a new handle could not follow that writer's generation
    /// or hold back its page reuse. Stop that writer (or wait for it to close), then open again.
    case lockFileReplaced(path: String)
    /// Waiting for the writer lock gave up (`holderPID` as in `writerLocked`).
    case writerLockTimedOut(path: String, holderPID: Int32, seconds: Double)
    /// The disk holding `path` is full. A commit that fails this way leaves the store at its
    /// previous generation; a copy, a store being created or a lock file being sized also report it.
    case diskFull(path: String)
    /// A system call failed.
    case io(operation: String, path: String, errno: Int32)
    case treeNotFound(name: String)
    case treeExists(name: String)
    /// `put(..., mode: .insert)` found the key already present; nothing was written.
    case keyExists
    /// The API was used in a way it does not allow; the message says how to fix it.
    case misuse(String)
    /// A read-only handle met a page of its snapshot that a later commit rewrote: the snapshot
    /// was not protected (a handle without a lock file, read while a writer appeared). Nothing
    /// was returned from that page; read again (a new snapshot) or reopen the store.
    case snapshotOverwritten(generation: UInt64, page: UInt64, writtenBy: UInt64)

    public var description: String {
        switch self {
        case let .notAStore(path, reason):
            return "\(path) is not a Strata store: \(reason)"
        case let .unsupportedFormat(path, found, supported):
            return "\(path) uses store format \(found), but this build of Strata reads format \(supported); open it with a matching version"
        case let .truncatedFile(path, expected, actual):
            return "\(path) is truncated: the newest commit needs \(expected) bytes but the file has \(actual); restore it from a backup"
        case let .corruptMeta(path, reason):
            return "\(path) has no valid meta page (\(reason)); restore it from a backup"
        case let .corruptPage(page, reason):
            return "page \(page) is corrupt: \(reason); run `strata check` and restore from a backup"
        case let .keyTooLarge(size, maximum):
            return "key of \(size) bytes is larger than the maximum of \(maximum) bytes for this page size"
        case let .valueTooLarge(size, maximum):
            return "value of \(size) bytes is larger than the maximum of \(maximum) bytes"
        case .readOnly:
            return "the store was opened read-only; open it with mode .readWrite to write"
        case let .closed(what):
            return "the \(what) is already closed"
        case let .readerTableFull(capacity):
            return "all \(capacity) reader slots are held by live readers; end long-running read transactions or create the store with more reader slots"
        case let .writerLocked(path, pid):
            let holder = pid > 0 ? "process \(pid)" : "another process"
            return "\(path) is already open for writing by \(holder); open it read-only, or wait for the writer with a timeout"
        case let .lockFileReplaced(path):
            return "the lock file of \(path) was deleted or replaced while a writer still has the store open; new handles cannot follow that writer: stop it (or wait until it closes the store), then open the store again"
        case let .writerLockTimedOut(path, pid, seconds):
            let holder = pid > 0 ? "process \(pid)" : "another process"
            return "gave up after \(seconds) s waiting for \(holder) to release the writer lock on \(path)"
        case let .diskFull(path):
            return "no space left on the device holding \(path); free some space and try again (a commit that failed this way was rolled back: the store is at its previous generation)"
        case let .io(operation, path, code):
            return "\(operation) failed on \(path): \(String(cString: strerror(code))) (errno \(code))"
        case let .treeNotFound(name):
            return "no tree named '\(name)' exists in this snapshot"
        case let .treeExists(name):
            return "a tree named '\(name)' already exists"
        case .keyExists:
            return "the key already exists; use .upsert to replace it"
        case let .misuse(message):
            return message
        case let .snapshotOverwritten(generation, page, writtenBy):
            return "page \(page) of the snapshot at generation \(generation) was rewritten by a later commit (\(writtenBy)) while this read-only handle read it unprotected (it has no lock file to pin snapshots in); read again, or reopen the store"
        }
    }
}
