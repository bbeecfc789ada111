import Glibc

/// The one-writer rule: a read-write handle holds an exclusive open-file-description lock on
/// `LockFile.writerLockByte` of the lock file, and of the data file, for its whole life. The
/// kernel drops both when the holder closes them or dies, so a standby writer
/// (`WriterLockWait.forever`) takes over without any cleanup.
enum WriterLock {
    /// The writer lock is taken on the lock file and then on the data file: a writer whose lock
    /// file was deleted (or replaced) under it still holds the data file's lock, so a second
    /// writer arriving with a fresh lock file is refused too. (`LockFile` already refuses to
    /// start a fresh table while that lock is held, `lockFileReplaced`; this covers a lock file
    /// replaced between that check and here.)
    static func acquire(_ lockFile: LockFile, dataFile: PosixFile, path: String, wait: WriterLockWait) throws {
        // One deadline for both locks: `.wait(seconds:)` bounds the whole wait.
        let deadline: UInt64? = {
            switch wait {
            case .fail: return Clock.monotonicNanoseconds()
            case .wait(let seconds): return Clock.monotonicNanoseconds() &+ Clock.nanoseconds(seconds)
            case .forever: return nil
            }
        }()
        try acquireOnLockFile(lockFile, path: path, wait: wait, deadline: deadline)
        while try !dataFile.tryLock(offset: LockFile.writerLockByte) {
            if let deadline, Clock.monotonicNanoseconds() >= deadline {
                lockFile.file.unlock(offset: LockFile.writerLockByte)
                // The holder is a writer whose lock file was replaced under it (it holds the data
                // file's lock but not this lock file's): waiting longer would not help.
                throw StrataError.lockFileReplaced(path: path)
            }
            usleep(2000)
        }
        // Named at once, before the (possibly long) recovery that follows: until then a refused
        // writer would be shown the previous holder's pid.
        lockFile.writerPID.pointee.store(UInt32(bitPattern: getpid()), ordering: .releasing)
    }

    /// The pid the lock file names as the writer, if that process is alive: 0 when none is named
    /// or the one named is gone (a writer killed before it could clear it; its pid may since
    /// belong to an unrelated process, which no message should point a person at — so this is
    /// a best guess, never a promise).
    static func holderPID(_ lockFile: LockFile) -> Int32 {
        let pid = Int32(bitPattern: lockFile.writerPID.pointee.load(ordering: .acquiring))
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return 0 }
        return pid
    }

    private static func acquireOnLockFile(_ lockFile: LockFile, path: String, wait: WriterLockWait, deadline: UInt64?) throws {
        if try lockFile.file.tryLock(offset: LockFile.writerLockByte) { return }
        let holder = { holderPID(lockFile) }
        switch wait {
        case .fail:
            throw StrataError.writerLocked(path: path, holderPID: holder())
        case .forever:
            try lockFile.file.lockWaiting(offset: LockFile.writerLockByte)
        case .wait(let seconds):
            let deadline = deadline ?? 0
            var pause: UInt32 = 500
            while Clock.monotonicNanoseconds() < deadline {
                usleep(pause)
                pause = min(pause * 2, 20_000)
                if try lockFile.file.tryLock(offset: LockFile.writerLockByte) { return }
            }
            throw StrataError.writerLockTimedOut(path: path, holderPID: holder(), seconds: seconds)
        }
    }
}
