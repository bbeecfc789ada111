/// One thread's keyed container boxes, built once per key type, so that decoding a record does
/// not build a new one for every keyed container. Owned by the thread's `BinaryDecodingThread`;
/// this value is a view of its storage (plain pointers), which each decode state carries.
///
/// Why: `KeyedDecodingContainer(_:)` allocates a box, and building it from unspecialized code
/// (the decoder only learns `Key` at run time) looks up the generic metadata of
/// `BinaryKeyedDecodingContainer<Key>`, of the box type and of their conformance. Together with
/// freeing the box that was about a fifth of decoding a small struct. A cached box is handed out
/// again by rewriting the `BinaryKeyedContainerState` its container points to: what the coder
/// learns about a key type it learns once per thread, not per instance.
///
/// Handing a box out needs no metadata look-up either: a `KeyedDecodingContainer<Key>` can only
/// be copied through its type's metadata (the standard library may change its layout), and
/// unspecialized code would look that up (`swift_getGenericMetadata`) on every call. Each entry
/// has a `ContainerVendor<KeyedDecodingContainer<Key>>`, built once, whose method finds that
/// metadata in its own class metadata instead.
///
/// Invariants:
/// - A box is handed out only while its entry holds its only reference
///   (`isKnownUniquelyReferenced`), that is when no container from its previous use is alive.
///   A nested container of the same key type (a recursive type) therefore gets another entry
///   (up to `maximumEntriesPerKey` of one key type),
///   and a container that escaped its `init(from:)` keeps its box out of reuse forever, so
///   its state is never rewritten under it (until its thread exits, when the states are freed:
///   a container kept past its `init(from:)` was never valid to use, before this cache too, as
///   it points into a finished decode).
/// - At most `maximumEntries` per thread, beyond which containers are built as before; entries
///   are never evicted.
/// - It relies on `KeyedDecodingContainer` being one reference to its box, as in the standard
///   library's source. That is checked once (`isUsable`); if it ever changes, threads get no
///   cache and decoding works as before.
struct BinaryKeyedContainerCache {
    static let maximumEntries = 32
    /// Nesting depth of one key type that is served from the cache (deeper levels build boxes).
    static let maximumEntriesPerKey = 4

    /// Raw storage and a raw count, read without the exclusivity checks and copies that class
    /// properties and arrays cost.
    private let storage: UnsafeMutablePointer<Entry>
    private let count: UnsafeMutablePointer<Int>

    static func allocate() -> BinaryKeyedContainerCache {
        let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        count.initialize(to: 0)
        return BinaryKeyedContainerCache(storage: .allocate(capacity: maximumEntries), count: count)
    }

    /// Frees the entries (their boxes, states and vendors); no container from them may be in use.
    func deallocate() {
        for index in 0..<count.pointee {
            // States are plain values: nothing to deinitialize.
            storage[index].state.deallocate()
            storage[index].vendor.release()
            BinaryKeyNameTable.deallocate(storage[index].keyNames)
        }
        storage.deinitialize(count: count.pointee)
        storage.deallocate()
        count.deallocate()
    }

    /// The container for `Key` with `state`: a cached box if one is free, else `make(state)`.
    func container<Key: CodingKey>(
        _: Key.Type, state: BinaryKeyedContainerState,
        orMake make: (BinaryKeyedContainerState) -> KeyedDecodingContainer<Key>
    ) -> KeyedDecodingContainer<Key> {
        let keyType = ObjectIdentifier(Key.self)
        let cached = storage
        var entriesOfKey = 0
        for index in 0..<count.pointee where cached[index].keyType == keyType {
            // Raw storage and a concrete class type, so this checks the cached reference in
            // place: through an array, a class property or an `AnyObject` the compiler copies
            // (retains) it first, and it is never unique.
            if isKnownUniquelyReferenced(&cached[index].box) {
                cached[index].state.pointee = state
                cached[index].state.pointee.keyNames = cached[index].keyNames
                // The entry holds the vendor, so no retain is needed around the call.
                return cached[index].vendor._withUnsafeGuaranteedRef {
                    unsafeDowncast($0, to: ContainerVendor<KeyedDecodingContainer<Key>>.self).vend()
                }
            }
            entriesOfKey += 1
        }
        let count = count.pointee
        // Entries are never evicted: a deeply recursive value of one key type must not take every
        // entry and leave the thread's other types uncached for the rest of its life.
        guard count < Self.maximumEntries, entriesOfKey < Self.maximumEntriesPerKey else { return make(state) }
        let keyNames = BinaryKeyNameTable.allocate()
        let slot = UnsafeMutablePointer<BinaryKeyedContainerState>.allocate(capacity: 1)
        slot.initialize(to: state)
        slot.pointee.keyNames = keyNames
        let container = KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(state: slot))
        let entry = cached + count
        let vendor = ContainerVendor<KeyedDecodingContainer<Key>>(entry: entry)
        entry.initialize(to: Entry(keyType: keyType, box: unsafeBitCast(container, to: BoxReference.self), state: slot,
                                   vendor: Unmanaged.passRetained(vendor), keyNames: keyNames))
        self.count.pointee = count + 1
        return container
    }

    /// Number of cached boxes on this thread (for tests).
    static var entryCountOnThisThread: Int {
        BinaryDecodingThread.current?.takeUnretainedValue().containerCache?.count.pointee ?? 0
    }

    /// Number of cached boxes for `Key` on this thread (for tests).
    static func entryCountOnThisThread<Key: CodingKey>(for _: Key.Type) -> Int {
        guard let cache = BinaryDecodingThread.current?.takeUnretainedValue().containerCache else { return 0 }
        let keyType = ObjectIdentifier(Key.self)
        return (0..<cache.count.pointee).filter { cache.storage[$0].keyType == keyType }.count
    }

    /// Whether a `KeyedDecodingContainer` is exactly one reference to a
    /// `_KeyedDecodingContainerBox`, which the bit casts here assume.
    static let isUsable: Bool = {
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
    fileprivate final class BoxReference {}

    fileprivate struct Entry {
        let keyType: ObjectIdentifier
        /// The `_KeyedDecodingContainerBox` (a `KeyedDecodingContainer` bit cast).
        var box: BoxReference
        /// The state the box's container points to, owned by the entry.
        let state: UnsafeMutablePointer<BinaryKeyedContainerState>
        /// A `ContainerVendor<KeyedDecodingContainer<Key>>` for this entry, retained by it.
        let vendor: Unmanaged<AnyObject>
        /// The key names learned for `Key`, owned by the entry.
        let keyNames: UnsafeMutablePointer<BinaryKeyNameTable>
    }
}

/// Copies an entry's box out as a `Container` (a `KeyedDecodingContainer<Key>`). Its method gets
/// `Container`'s metadata from the vendor's own class metadata, where unspecialized code
/// naming `KeyedDecodingContainer<Key>` would look it up in the runtime's cache on every call.
private final class ContainerVendor<Container> {
    let entry: UnsafeMutablePointer<BinaryKeyedContainerCache.Entry>

    init(entry: UnsafeMutablePointer<BinaryKeyedContainerCache.Entry>) {
        self.entry = entry
    }

    func vend() -> Container {
        unsafeBitCast(entry.pointee.box, to: Container.self)
    }
}
