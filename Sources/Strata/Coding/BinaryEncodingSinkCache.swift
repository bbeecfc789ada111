import Glibc

/// Keeps one idle `BinaryEncodingSink` per thread, so that encoding an instance does not
/// allocate and free a sink, its frame stack and its output buffer every time (together
/// about an eighth of encoding a small struct).
///
/// Invariants:
/// - A cached sink is referenced only by its thread's slot (one retain, held through
///   `Unmanaged`). `take` empties the slot before handing the sink out, so a nested encode on
///   the same thread (an `encode(to:)` that itself encodes) finds the slot empty and gets a
///   fresh sink: a sink is never used by two encodes at once.
/// - `recycle` only caches a sink nothing else references (`isKnownUniquelyReferenced`). A
///   container or encoder that escaped its `encode(to:)` keeps its sink out of the cache, so
///   misuse can never write into a later encode's output. A cached keyed container holds its
///   sink unretained, so one that escaped is found by its box instead
///   (`BinaryKeyedEncodingContainerCache.allBoxesIdle`), and its sink is kept alive for good:
///   neither reused nor freed under it.
/// - Sinks whose buffer grew past `maximumCachedCapacity` are dropped, bounding what an idle
///   thread holds. A thread's cached sink is released when the thread exits.
enum BinaryEncodingSinkCache {
    static let maximumCachedCapacity = 64 * 1024

    /// The thread-specific slot; nil if the process ran out of keys, and then nothing is cached
    /// (encoding works the same, allocating a sink each time).
    private static let slot: pthread_key_t? = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { cached in
            if let cached { Unmanaged<BinaryEncodingSink>.fromOpaque(cached).release() }
        }
        return status == 0 ? key : nil
    }()

    /// A sink whose output starts with `prefix`: this thread's cached one, or a new one.
    static func take(prefix: [UInt8]) -> BinaryEncodingSink {
        guard let slot, let cached = pthread_getspecific(slot) else { return BinaryEncodingSink(prefix: prefix) }
        pthread_setspecific(slot, nil)
        let sink = Unmanaged<BinaryEncodingSink>.fromOpaque(cached).takeRetainedValue()
        sink.reset(prefix: prefix)
        return sink
    }

    /// Offers a finished sink back to this thread's slot (see the invariants above).
    static func recycle(_ sink: inout BinaryEncodingSink) {
        // From here on, keyed containers asked of an escaped encoder own the sink (`isEncoding`).
        sink.isEncoding = false
        // A cached keyed container that escaped its `encode(to:)` refers to the sink unretained:
        // the sink is kept alive for good (never reused, never freed) rather than left dangling.
        guard sink.keyedContainers.allBoxesIdle() else {
            _ = Unmanaged.passRetained(sink)
            return
        }
        guard let slot, isKnownUniquelyReferenced(&sink), sink.output.capacity <= maximumCachedCapacity,
              pthread_getspecific(slot) == nil else { return }
        let retained = Unmanaged.passRetained(sink)
        if pthread_setspecific(slot, retained.toOpaque()) != 0 { retained.release() }  // not cached
    }
}
