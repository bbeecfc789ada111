import CStrataSystem
import Glibc

/// A binary semaphore used as the in-process writer lock. Unlike a mutex it may be released by a
/// different thread than the one that took it, so a write transaction can begin on one thread and
/// commit on another (async code hops threads). Blocking: never wait on it from the cooperative
/// thread pool (the async APIs hop to a dedicated thread).
final class BlockingLock: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

    /// `initiallyAvailable: false` makes it a one-shot wake-up: `lock()` sleeps until another
    /// thread calls `unlock()` (group commit's waiting callers).
    init(initiallyAvailable: Bool = true) {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, initiallyAvailable ? 1 : 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    func lock() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }

    /// Takes the lock if it is free, without waiting; returns whether it did.
    func tryLock() -> Bool {
        while true {
            if sem_trywait(semaphore) == 0 { return true }
            if errno != EINTR { return false }
        }
    }

    /// Takes the lock, waiting at most `nanoseconds` (on the monotonic clock: setting the
    /// system's clock does not stretch the wait); returns whether it did.
    func lock(timeoutNanoseconds nanoseconds: UInt64) -> Bool {
        strata_semaphore_wait_monotonic(semaphore, nanoseconds) == 1
    }

    func unlock() { sem_post(semaphore) }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }
}
