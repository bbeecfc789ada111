import Glibc

/// Keeps, per thread, the keyed container boxes built for each key type, so that decoding a
/// record does not build a new one for every keyed container.
///
/// Why: `KeyedDecodingContainer(_:)` allocates a box, and building it from unspecialized code
/// (the decoder only learns `Key` at run time) looks up the generic metadata of
/// `BinaryKeyedDecodingContainer<Key>`, of the box type and of their conformance. Together with
/// freeing the box that was about a fifth of decoding a small struct. A cached box is handed out
/// again by rewriting the `BinaryKeyedContainerState` its container points to: what the coder
/// learns about a key type it learns once per thread, not per instance.
///
/// Invariants:
/// - A box is handed out only while the cache holds its only reference
///   (`isKnownUniquelyReferenced`), that is when no container from its previous use is alive.
///   A nested container of the same key type (a recursive type) therefore gets another entry
///   (up to `maximumEntriesPerKey` of one key type),
///   and a container that escaped its `init(from:)` keeps its box out of reuse forever, so
///   its state is never rewritten under it (until its thread exits, when the states are freed:
///   a container kept past its `init(from:)` was never valid to use, before this cache too, as
///   it points into a finished decode).
/// - Entries are per thread (one decode runs on one thread: no `await` inside), so there is no
///   locking; at most `maximumEntries` per thread, beyond which containers are built as before.
///   A thread's entries are freed when the thread exits.
/// - It relies on `KeyedDecodingContainer` being one reference to its box, as in the standard
///   library's source. That is checked once (`boxIsOneReference`); if it ever changes, nothing
///   is cached and decoding works as before.
enum BinaryKeyedContainerCache {
    static let maximumEntries = 32
    /// Nesting depth of one key type that is served from the cache (deeper levels build boxes).
    static let maximumEntriesPerKey = 4

    /// The container for `Key` with `state`: a cached box if one is free, else `make(state)`.
    static func container<Key: CodingKey>(
        _: Key.Type, state: BinaryKeyedContainerState,
        orMake make: (BinaryKeyedContainerState) -> KeyedDecodingContainer<Key>
    ) -> KeyedDecodingContainer<Key> {
        guard boxIsOneReference, let entries = threadEntries() else { return make(state) }
        let keyType = ObjectIdentifier(Key.self)
        let cached = entries.storage
        var entriesOfKey = 0
        for index in 0..<entries.count.pointee where cached[index].keyType == keyType {
            // Raw storage and a concrete class type, so this checks the cached reference in
            // place: through an array, a class property or an `AnyObject` the compiler copies
            // (retains) it first, and it is never unique.
            if isKnownUniquelyReferenced(&cached[index].box) {
                cached[index].state.pointee = state
                return unsafeBitCast(cached[index].box, to: KeyedDecodingContainer<Key>.self)
            }
            entriesOfKey += 1
        }
        let count = entries.count.pointee
        // Entries are never evicted: a deeply recursive value of one key type must not take every
        // entry and leave the thread's other types uncached for the rest of its life.
        guard count < maximumEntries, entriesOfKey < maximumEntriesPerKey else { return make(state) }
        let slot = UnsafeMutablePointer<BinaryKeyedContainerState>.allocate(capacity: 1)
        slot.initialize(to: state)
        let container = KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(state: slot))
        (cached + count).initialize(to: Entry(keyType: keyType, box: unsafeBitCast(container, to: BoxReference.self), state: slot))
        entries.count.pointee = count + 1
        return container
    }

    /// Number of cached boxes on this thread (for tests).
    static var entryCountOnThisThread: Int { threadEntries()?.count.pointee ?? 0 }

    /// Number of cached boxes for `Key` on this thread (for tests).
    static func entryCountOnThisThread<Key: CodingKey>(for _: Key.Type) -> Int {
        guard let entries = threadEntries() else { return 0 }
        let keyType = ObjectIdentifier(Key.self)
        return (0..<entries.count.pointee).filter { entries.storage[$0].keyType == keyType }.count
    }

    /// Whether a `KeyedDecodingContainer` is exactly one reference to a
    /// `_KeyedDecodingContainerBox`, which the bit casts above assume.
    private static let boxIsOneReference: Bool = {
        typealias Probe = KeyedDecodingContainer<BinaryCodingKey>
        guard MemoryLayout<Probe>.size == MemoryLayout<AnyObject>.size,
              MemoryLayout<Probe>.alignment == MemoryLayout<AnyObject>.alignment,
              !_isPOD(Probe.self) else { return false }
        // The probe's state is never read: only the box's class is inspected.
        let state = UnsafeMutablePointer<BinaryKeyedContainerState>.allocate(capacity: 1)
        defer { state.deallocate() }
        let object = unsafeBitCast(Probe(BinaryKeyedDecodingContainer<BinaryCodingKey>(state: state)), to: AnyObject.self)
        return String(describing: type(of: object)).hasPrefix("_KeyedDecodingContainerBox<")
    }()

    /// Stands for the standard library's `_KeyedDecodingContainerBox`, which cannot be named.
    /// Never instantiated: a reference of this static type is only retained, released and
    /// checked for uniqueness, which work the same for every native Swift object (the real
    /// class is in the object's header), and bit cast back to `KeyedDecodingContainer`.
    private final class BoxReference {}

    private struct Entry {
        let keyType: ObjectIdentifier
        /// The `_KeyedDecodingContainerBox` (a `KeyedDecodingContainer` bit cast).
        var box: BoxReference
        /// The state the box's container points to, owned by the entry.
        let state: UnsafeMutablePointer<BinaryKeyedContainerState>
    }

    /// One thread's cached boxes. Fixed raw storage (`maximumEntries`) and a raw count, read
    /// without the exclusivity checks and copies that class properties and arrays cost.
    private final class Entries {
        let storage = UnsafeMutablePointer<Entry>.allocate(capacity: BinaryKeyedContainerCache.maximumEntries)
        let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)

        init() {
            count.initialize(to: 0)
        }

        deinit {
            for index in 0..<count.pointee {
                // States are plain values: nothing to deinitialize.
                storage[index].state.deallocate()
            }
            storage.deinitialize(count: count.pointee)
            storage.deallocate()
            count.deallocate()
        }
    }

    /// The thread-specific slot; nil if the process ran out of keys, and then nothing is cached.
    private static let slot: pthread_key_t? = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { entries in
            if let entries { Unmanaged<Entries>.fromOpaque(entries).release() }
        }
        return status == 0 ? key : nil
    }()

    private static func threadEntries() -> Entries? {
        guard let slot else { return nil }
        if let existing = pthread_getspecific(slot) {
            return Unmanaged<Entries>.fromOpaque(existing).takeUnretainedValue()
        }
        let retained = Unmanaged.passRetained(Entries())
        guard pthread_setspecific(slot, retained.toOpaque()) == 0 else {
            retained.release()
            return nil
        }
        return retained.takeUnretainedValue()
    }
}
