/// A sink's keyed container boxes, built once per key type, so that encoding a record does not
/// build a new `KeyedEncodingContainer` for every keyed container (the encoding side of
/// `BinaryKeyedContainerCache`).
///
/// Why: `KeyedEncodingContainer(_:)` allocates a box, and building it from unspecialized code
/// (the encoder learns `Key` only at run time) looks up the generic metadata of
/// `BinaryKeyedEncodingContainer<Key>` and of the box type; with freeing the box, about 1,300
/// instructions per keyed container, a quarter of encoding a small struct. A cached box is handed
/// out again by rewriting the frame handle its container points to.
///
/// Invariants:
/// - The sink (one per thread, see `BinaryEncodingSinkCache`) owns the entries; a cached box's
///   container refers to the sink unretained (a retained reference would be a cycle) and to its
///   entry's handle slot.
/// - A box is handed out only while its entry holds its only reference (no container from its
///   previous use is alive); a nested container of the same key type gets another entry (up to
///   `maximumEntriesPerKey`), deeper levels and more than `maximumEntries` types get containers
///   built as before (`BinaryKeyedEncodingContainer.make`).
/// - Boxes are handed out only while the sink is inside its top-level encode
///   (`BinaryEncodingSink.isEncoding`), so `recycle`'s `allBoxesIdle` sees every box handed out.
///   An encoder or container that escaped holds the sink strongly and can ask for keyed
///   containers after the encode; those own the sink, because a cached box would be freed under
///   them with the sink once the escaped object is released.
/// - A box referenced from elsewhere when its encode finished escaped its `encode(to:)` (misuse):
///   `BinaryEncodingSinkCache.recycle` then keeps the sink alive for good instead of reusing or
///   freeing it (`allBoxesIdle`), so the escaped container finds a live sink that no later encode
///   uses: using it is a stale-handle error once its frame is closed (always after an encode that
///   finished), or after an encode that threw (frames left open) a write into that dead sink's
///   output, which nobody reads; never a write into a later encode.
/// - Relies on `KeyedEncodingContainer` being one reference to its box, checked once
///   (`isUsable`); if that ever changes, nothing is cached.
struct BinaryKeyedEncodingContainerCache {
    static let maximumEntries = 16
    static let maximumEntriesPerKey = 4

    private let storage: UnsafeMutablePointer<Entry>
    private let count: UnsafeMutablePointer<Int>

    static func allocate() -> BinaryKeyedEncodingContainerCache {
        let count = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        count.initialize(to: 0)
        return BinaryKeyedEncodingContainerCache(storage: .allocate(capacity: maximumEntries), count: count)
    }

    /// Frees the entries; only when `allBoxesIdle()` (no container of them is alive).
    func deallocate() {
        for index in 0..<count.pointee {
            storage[index].handle.deallocate()
            storage[index].vendor.release()
        }
        storage.deinitialize(count: count.pointee)
        storage.deallocate()
        count.deallocate()
    }

    /// Number of cached boxes (for tests).
    var entryCount: Int { count.pointee }

    /// Whether no box is referenced from outside the cache, that is no container escaped.
    func allBoxesIdle() -> Bool {
        for index in 0..<count.pointee where !isKnownUniquelyReferenced(&storage[index].box) { return false }
        return true
    }

    /// A cached container for `Key` on `sink` at `handle`, or `make(sink, handle)` if none is free
    /// and no entry can be added, or if `sink` is not inside its top-level encode (`isEncoding`). (A closure, not an optional result: wrapping the container in an
    /// optional looked up `KeyedEncodingContainer<Key>`'s metadata on every call.)
    func container<Key: CodingKey>(
        _: Key.Type, sink: BinaryEncodingSink, handle: BinaryFrameHandle,
        orMake make: (BinaryEncodingSink, BinaryFrameHandle) -> KeyedEncodingContainer<Key>
    ) -> KeyedEncodingContainer<Key> {
        guard Self.isUsable, sink.isEncoding else { return make(sink, handle) }
        let keyType = ObjectIdentifier(Key.self)
        let cached = storage
        var entriesOfKey = 0
        for index in 0..<count.pointee where cached[index].keyType == keyType {
            // Checked in place (raw storage, a concrete class type): a copy would never be unique.
            if isKnownUniquelyReferenced(&cached[index].box) {
                cached[index].handle.pointee = handle
                return cached[index].vendor._withUnsafeGuaranteedRef {
                    unsafeDowncast($0, to: EncodingContainerVendor<KeyedEncodingContainer<Key>>.self).vend()
                }
            }
            entriesOfKey += 1
        }
        let count = count.pointee
        guard count < Self.maximumEntries, entriesOfKey < Self.maximumEntriesPerKey else { return make(sink, handle) }
        let slot = UnsafeMutablePointer<BinaryFrameHandle>.allocate(capacity: 1)
        slot.initialize(to: handle)
        let container = KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(cachedOn: sink, handle: slot))
        let entry = cached + count
        let vendor = EncodingContainerVendor<KeyedEncodingContainer<Key>>(entry: entry)
        entry.initialize(to: Entry(keyType: keyType, box: unsafeBitCast(container, to: BoxReference.self), handle: slot,
                                   vendor: Unmanaged.passRetained(vendor)))
        self.count.pointee = count + 1
        return container
    }

    /// Whether a `KeyedEncodingContainer` is exactly one reference to a
    /// `_KeyedEncodingContainerBox`, which the bit casts here assume.
    static let isUsable: Bool = {
        typealias Probe = KeyedEncodingContainer<BinaryCodingKey>
        guard MemoryLayout<Probe>.size == MemoryLayout<AnyObject>.size,
              MemoryLayout<Probe>.alignment == MemoryLayout<AnyObject>.alignment,
              !_isPOD(Probe.self) else { return false }
        // The probe is never used: only the box's class is inspected.
        let sink = BinaryEncodingSink(prefix: [])
        let object = unsafeBitCast(Probe(BinaryKeyedEncodingContainer<BinaryCodingKey>(sink: sink, handle: BinaryFrameHandle(depth: 0, id: 0))),
                                   to: AnyObject.self)
        return String(describing: type(of: object)).hasPrefix("_KeyedEncodingContainerBox<")
    }()

    /// Stands for the standard library's `_KeyedEncodingContainerBox`, which cannot be named; only
    /// retained, released, checked for uniqueness and bit cast back (see `BinaryKeyedContainerCache`).
    fileprivate final class BoxReference {}

    fileprivate struct Entry {
        let keyType: ObjectIdentifier
        /// The `_KeyedEncodingContainerBox` (a `KeyedEncodingContainer` bit cast).
        var box: BoxReference
        /// The frame handle the box's container reads, owned by the entry.
        let handle: UnsafeMutablePointer<BinaryFrameHandle>
        /// An `EncodingContainerVendor<KeyedEncodingContainer<Key>>` for this entry, retained by it.
        let vendor: Unmanaged<AnyObject>
    }
}

/// Copies an entry's box out as a `Container` (a `KeyedEncodingContainer<Key>`), with that type's
/// metadata taken from the vendor's own class metadata instead of looked up per call.
private final class EncodingContainerVendor<Container> {
    let entry: UnsafeMutablePointer<BinaryKeyedEncodingContainerCache.Entry>

    init(entry: UnsafeMutablePointer<BinaryKeyedEncodingContainerCache.Entry>) {
        self.entry = entry
    }

    func vend() -> Container {
        unsafeBitCast(entry.pointee.box, to: Container.self)
    }
}
