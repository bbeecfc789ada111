import Glibc

/// An open file descriptor with the handful of calls the engine needs, each turning `errno` into a
/// `StrataError` that names the operation and the path. `EINTR` is retried everywhere.
final class PosixFile: @unchecked Sendable {
    // Immutable after init; the descriptor is closed exactly once, by `close()` or `deinit`.
    @_spi(Testing) public let path: String
    private(set) var descriptor: Int32

    init(path: String, flags: Int32, mode: mode_t = 0o600) throws {
        self.path = path
        var fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        while fd < 0 && errno == EINTR { fd = Glibc.open(path, flags | O_CLOEXEC, mode) } // a FIFO or a slow network file system
        guard fd >= 0 else { throw PosixFile.error("open", path) }
        descriptor = fd
    }

    deinit { close() }

    /// Releases every lock of this descriptor, then closes it.
    ///
    /// Why unlock first: OFD locks belong to the open file description, and closing our descriptor
    /// ends them only when no other descriptor refers to that description. A child that another
    /// thread is spawning holds a copy of every descriptor from its clone until its `exec` closes
    /// them (`O_CLOEXEC`), so without the unlock a closed handle's locks outlived it for that
    /// moment: a store reopened then looked open elsewhere, and its newest commit went
    /// unverified (`ReopenWhileSpawningTests`), and a writer lock could look held. Unlocking
    /// through any descriptor of the description releases them for every copy; the locks of
    /// other descriptions of the same file (other handles) are untouched.
    func close() {
        guard descriptor >= 0 else { return }
        unlock(offset: 0, length: 0) // length 0: to the end of the file and beyond
        _ = Glibc.close(descriptor)
        descriptor = -1
    }

    static func error(_ operation: String, _ path: String, _ code: Int32 = errno) -> StrataError {
        if code == ENOSPC || code == EDQUOT { return .diskFull(path: path) }
        return .io(operation: operation, path: path, errno: code)
    }

    @_spi(Testing) public func size() throws -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw PosixFile.error("fstat", path) }
        return UInt64(info.st_size)
    }

    func status() throws -> stat {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw PosixFile.error("fstat", path) }
        return info
    }

    /// Reads exactly `count` bytes unless the file ends first; returns how many were read.
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: UInt64) throws -> Int {
        var done = 0
        while done < count {
            let n = pread(descriptor, buffer + done, count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw PosixFile.error("read", path)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            let n = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw PosixFile.error("write", path)
            }
            // A regular file never takes zero bytes of a non-empty write; if one did, retrying
            // would loop forever.
            if n == 0 { throw PosixFile.error("write", path, EIO) }
            done += n
        }
    }

    @_spi(Testing) public func syncData() throws {
        while fdatasync(descriptor) != 0 {
            if errno == EINTR { continue }
            throw PosixFile.error("fdatasync", path)
        }
    }

    @_spi(Testing) public func setSize(_ size: UInt64) throws {
        while ftruncate(descriptor, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw PosixFile.error("ftruncate", path)
        }
    }

    // MARK: Open-file-description locks
    //
    // OFD locks (Linux >= 3.15) belong to the open file description, not the process: two handles
    // in one process conflict with each other like two processes do, and the kernel drops them when
    // the description closes or the process dies. That is what makes "second writer in the same
    // process" and "dead reader" detectable. Classic fcntl locks cannot do either.
    static let ofdGetLock: Int32 = 36 // F_OFD_GETLK
    static let ofdSetLock: Int32 = 37 // F_OFD_SETLK
    static let ofdSetLockWait: Int32 = 38 // F_OFD_SETLKW

    /// An OFD lock request of `type` (F_RDLCK, F_WRLCK, F_UNLCK) on `length` bytes at `offset`;
    /// `l_pid` must be 0 for open-file-description locks.
    private static func lockRequest(type: Int32, offset: Int64, length: Int64) -> flock {
        var request = flock()
        request.l_type = Int16(type)
        request.l_whence = Int16(SEEK_SET)
        request.l_start = off_t(offset)
        request.l_len = off_t(length)
        request.l_pid = 0
        return request
    }

    /// Tries to lock `length` bytes at `offset` without blocking. Returns false if another open
    /// file description holds a conflicting lock.
    func tryLock(offset: Int64, length: Int64 = 1, exclusive: Bool = true) throws -> Bool {
        var request = PosixFile.lockRequest(type: exclusive ? F_WRLCK : F_RDLCK, offset: offset, length: length)
        while fcntl(descriptor, PosixFile.ofdSetLock, &request) != 0 {
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EACCES { return false }
            if errno == EINVAL {
                throw StrataError.misuse("the kernel does not support open-file-description locks (Linux 3.15 or later is required)")
            }
            throw PosixFile.error("fcntl(F_OFD_SETLK)", path)
        }
        return true
    }

    /// Blocks the calling thread until the lock is granted, for as long as that takes: store
    /// set-up waits here for microseconds, and a standby writer (`WriterLockWait.forever`) waits
    /// here until the current writer's process closes its handle or dies. Never call it from the
    /// cooperative pool. An interrupted wait (EINTR) is resumed, not reported.
    func lockWaiting(offset: Int64, length: Int64 = 1, exclusive: Bool = true) throws {
        var request = PosixFile.lockRequest(type: exclusive ? F_WRLCK : F_RDLCK, offset: offset, length: length)
        while fcntl(descriptor, PosixFile.ofdSetLockWait, &request) != 0 {
            if errno == EINTR { continue }
            throw PosixFile.error("fcntl(F_OFD_SETLKW)", path)
        }
    }

    /// Whether another open file description holds a lock on the byte (a pure query).
    func isLockedByOthers(offset: Int64, length: Int64 = 1) throws -> Bool {
        try conflictingLock(offset: offset, length: length) != nil
    }

    /// Whether another open file description holds a write lock on the byte (a pure query; a read
    /// lock of another tool on it does not count).
    func isWriteLockedByOthers(offset: Int64) throws -> Bool {
        try lockHeldByOthers(offset: offset, length: 1)?.l_type == Int16(F_WRLCK)
    }

    /// One lock (read or write) that another open file description holds in the range, or nil
    /// (a pure query; works on a descriptor opened read-only). Which one the kernel reports
    /// when several overlap the range is unspecified.
    func conflictingLock(offset: Int64, length: Int64) throws -> (start: Int64, length: Int64)? {
        try lockHeldByOthers(offset: offset, length: length).map { (Int64($0.l_start), Int64($0.l_len)) }
    }

    /// The `F_OFD_GETLK` answer for the range: a lock another open file description holds in it
    /// (type, start and length as the kernel reports them), or nil.
    private func lockHeldByOthers(offset: Int64, length: Int64) throws -> flock? {
        var request = PosixFile.lockRequest(type: F_WRLCK, offset: offset, length: length)
        while fcntl(descriptor, PosixFile.ofdGetLock, &request) != 0 {
            if errno == EINTR { continue }
            throw PosixFile.error("fcntl(F_OFD_GETLK)", path)
        }
        return request.l_type == Int16(F_UNLCK) ? nil : request
    }

    func unlock(offset: Int64, length: Int64 = 1) {
        var request = PosixFile.lockRequest(type: F_UNLCK, offset: offset, length: length)
        while fcntl(descriptor, PosixFile.ofdSetLock, &request) != 0 && errno == EINTR {}
    }
}
