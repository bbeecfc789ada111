import Glibc

/// What the binary decoder keeps per thread from one decode to the next: the cached keyed
/// container boxes (`BinaryKeyedContainerCache`) and idle decode states (`BinaryDecodingState`).
///
/// Why: a decode used to build its state on the stack inside a closure (generic over the decoded
/// type, so unspecialized) and to look the cache up in thread-specific storage once per keyed
/// container; together about a twentieth of loading a small record. Now a decode makes one
/// thread-specific look-up, takes an idle state whose arrays keep their capacity, and its
/// containers reach the cache through the state.
///
/// Invariants:
/// - One decode runs on one thread (no `await` inside), so nothing here is locked.
/// - A state is either idle (in the list headed by `idleStates`, linked through `nextIdle`) or
///   owned by exactly one decode in progress; a decode nested in another on the same thread
///   (an `init(from:)` that itself decodes binary bytes) takes another state.
/// - Everything is freed when the thread exits (no decode can be in progress then).
final class BinaryDecodingThread {
    /// The thread's container boxes; nil if the standard library's container layout is not the
    /// one the cache relies on (see `BinaryKeyedContainerCache.isUsable`).
    let containerCache: BinaryKeyedContainerCache?
    /// Head of the list of idle states.
    let idleStates: UnsafeMutablePointer<UnsafeMutablePointer<BinaryDecodingState>?>

    private init() {
        containerCache = BinaryKeyedContainerCache.isUsable ? BinaryKeyedContainerCache.allocate() : nil
        idleStates = .allocate(capacity: 1)
        idleStates.initialize(to: nil)
    }

    deinit {
        var next = idleStates.pointee
        while let state = next {
            next = state.pointee.nextIdle
            state.deinitialize(count: 1)
            state.deallocate()
        }
        idleStates.deallocate()
        containerCache?.deallocate()
    }

    /// An idle state of this thread, or a new one that will return to it.
    private func takeState() -> UnsafeMutablePointer<BinaryDecodingState> {
        if let state = idleStates.pointee {
            idleStates.pointee = state.pointee.nextIdle
            state.pointee.nextIdle = nil
            return state
        }
        let state = UnsafeMutablePointer<BinaryDecodingState>.allocate(capacity: 1)
        state.initialize(to: BinaryDecodingState(containerCache: containerCache, idleStates: idleStates))
        return state
    }

    /// A state for a decode on the calling thread; nil only if the process ran out of
    /// thread-specific keys (the caller then allocates one for the decode).
    static func takeState() -> UnsafeMutablePointer<BinaryDecodingState>? {
        current?._withUnsafeGuaranteedRef { $0.takeState() }
    }

    /// The calling thread's object (created on first use), unretained: the thread-specific slot
    /// holds it until the thread exits.
    static var current: Unmanaged<BinaryDecodingThread>? {
        guard let slot else { return nil }
        if let existing = pthread_getspecific(slot) {
            return Unmanaged<BinaryDecodingThread>.fromOpaque(existing)
        }
        let retained = Unmanaged.passRetained(BinaryDecodingThread())
        guard pthread_setspecific(slot, retained.toOpaque()) == 0 else {
            retained.release()
            return nil
        }
        return retained
    }

    /// The thread-specific slot; nil if the process ran out of keys, and then nothing is kept
    /// between decodes (decoding works the same, allocating its state each time).
    private static let slot: pthread_key_t? = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { thread in
            if let thread { Unmanaged<BinaryDecodingThread>.fromOpaque(thread).release() }
        }
        return status == 0 ? key : nil
    }()
}
