import Foundation
import Synchronization
import Testing
@testable import StrataCore

/// Group commit's waiting callers sleep on one `WakeupWord`; a leader wakes them all with one call.
/// A lost wake-up would hang a caller whose request is done, so these rounds race the condition
/// against the wait as closely as threads allow.
@Suite struct GroupCommitWakeupTests {
    /// Every round: 8 threads wait for the round's number, the main thread publishes it and wakes
    /// them once; all 8 must come through (a lost wake-up hangs the round, and the test with it).
    @Test func oneWakeAllReleasesEveryWaiter() throws {
        let word = WakeupWord()
        let round = Atomic<Int>(0)
        let through = Atomic<Int>(0)
        let rounds = 300, threads = 8
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<threads {
            Thread {
                for r in 1...rounds {
                    word.wait { round.load(ordering: .acquiring) >= r }
                    through.add(1, ordering: .relaxed)
                }
                finished.signal()
            }.start()
        }
        for r in 1...rounds {
            // Publish only when every thread is through the previous round, so waits and the
            // wake-up race in each round.
            while through.load(ordering: .relaxed) < (r - 1) * threads { usleep(10) }
            round.store(r, ordering: .releasing)
            word.wakeAll()
        }
        for _ in 0..<threads { finished.wait() }
        #expect(through.load(ordering: .relaxed) == rounds * threads)
    }

    /// A condition already true never sleeps, with or without a wake-up.
    @Test func trueConditionReturnsAtOnce() {
        let word = WakeupWord()
        word.wait { true }
        word.wakeAll()
        word.wait { true }
    }
}
