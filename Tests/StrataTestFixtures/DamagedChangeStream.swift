/// The loop of the tests that damage a commit under a change stream and expect its iterator to
/// throw. The damage is timed by the shared poller's next delivery; with many stores polled at
/// once (a full test run, a loaded machine) that delivery can be for the commit before, whose
/// snapshot then reads well and whose change arrives. Such an attempt is retried with the next
/// commit; an iterator that ends without an error ends the loop at once (that is the bug these
/// tests guard against).
public enum DamagedChangeStream {
    public enum Outcome {
        /// The iterator threw (the expected outcome; the test checks which error).
        case threw(any Error)
        /// The iterator ended (returned nil) without an error.
        case endedWithoutError(attempt: Int)
        /// Every attempt's change arrived before its damage.
        case neverFailed(attempts: Int)
    }

    /// Runs up to `attempts` rounds of: `armDamage` (registers the damage for the poller's next
    /// delivery), `commit(attempt)`, then `next()` (true: a change arrived, false: the iterator
    /// ended). Prints `[label]` when a round's change arrived before its damage.
    public static func outcome(label: String, attempts: Int = 3, armDamage: () -> Void,
                               commit: (Int) async throws -> Void, next: () async throws -> Bool) async throws -> Outcome {
        for attempt in 1...attempts {
            armDamage()
            try await commit(attempt)
            do {
                guard try await next() else { return .endedWithoutError(attempt: attempt) }
                print("[\(label)] attempt \(attempt): the change arrived before the damage; retrying")
            } catch {
                return .threw(error)
            }
        }
        return .neverFailed(attempts: attempts)
    }
}
