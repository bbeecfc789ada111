import CStrataSystem

/// Many threads sleep on one word until a condition holds; one `wakeAll()` wakes them all with
/// one system call (group commit wakes a whole group this way: a semaphore per caller cost a
/// system call, and usually a preemption of the leader, per caller). Blocking: never wait on it
/// from the cooperative thread pool.
final class WakeupWord: @unchecked Sendable {
    private let word: UnsafeMutablePointer<strata_wakeup_word>

    init() {
        word = .allocate(capacity: 1)
        word.initialize(to: strata_wakeup_word(sequence: 0, waiters: 0))
    }

    deinit { word.deallocate() }

    /// Sleeps until `condition` holds. The thread that makes it true must call `wakeAll()` after
    /// (no wake-up is lost in between). `condition` may be evaluated several times.
    func wait(until condition: () -> Bool) {
        while true {
            let seen = strata_wakeup_prepare(word)
            if condition() {
                strata_wakeup_finish(word)
                return
            }
            strata_wakeup_wait(word, seen)
            strata_wakeup_finish(word)
        }
    }

    /// Wakes every thread in `wait(until:)` to re-check its condition.
    func wakeAll() { strata_wakeup_all(word) }
}
