/// Writes `[field count]` then, per field, `[key length][key UTF-8][value length][value]`.
///
/// Fields appear in the order they are encoded (declaration order for synthesized Codable),
/// which the decoder exploits for O(1) lookups; `nil` optionals are simply omitted
/// (`encodeIfPresent`), which is what lets old readers skip and new readers miss fields.
///
/// The sink is held unretained and the frame handle through a pointer, so that a cached box's
/// container can be handed out again with a new handle (`BinaryKeyedEncodingContainerCache`);
/// a container built on demand keeps both alive through `owner`.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    private let sinkReference: Unmanaged<BinaryEncodingSink>
    private let handleSlot: UnsafeMutablePointer<BinaryFrameHandle>
    /// Set for a container built on demand (nil for a cached one, which the sink's cache owns).
    private let owner: BinaryKeyedEncodingContainerOwner?

    var sink: BinaryEncodingSink { sinkReference.takeUnretainedValue() }
    var handle: BinaryFrameHandle { handleSlot.pointee }

    /// Runs `body` with the sink borrowed, without the retain and release around each use that
    /// `sink` costs (the sink outlives the container, see the initializers).
    @inline(__always)
    private func withSink<Result>(_ body: (BinaryEncodingSink) throws -> Result) rethrows -> Result {
        try sinkReference._withUnsafeGuaranteedRef(body)
    }

    /// A container of its own (not cached): it keeps `sink` alive.
    init(sink: BinaryEncodingSink, handle: BinaryFrameHandle) {
        let owner = BinaryKeyedEncodingContainerOwner(sink: sink, handle: handle)
        sinkReference = .passUnretained(sink)
        handleSlot = owner.handle
        self.owner = owner
    }

    /// A cached container: `sink` owns the cache that owns `handle` (see the cache's invariants).
    init(cachedOn sink: BinaryEncodingSink, handle: UnsafeMutablePointer<BinaryFrameHandle>) {
        sinkReference = .passUnretained(sink)
        handleSlot = handle
        owner = nil
    }

    /// The keyed container for the frame `handle` of `sink`: a cached box when one is free.
    static func make(sink: BinaryEncodingSink, handle: BinaryFrameHandle) -> KeyedEncodingContainer<Key> {
        sink.keyedContainers.container(Key.self, sink: sink, handle: handle) { sink, handle in
            KeyedEncodingContainer(BinaryKeyedEncodingContainer(sink: sink, handle: handle))
        }
    }

    var codingPath: [any CodingKey] { sink.codingPath(depth: handle.depth) }

    /// Inlined into each `encode` overload so the primitive's writer is called directly (this
    /// container is generic over `Key` and usually runs unspecialized).
    @inline(__always)
    private func writePrimitive(_ value: some BinaryPrimitive, forKey key: Key) throws {
        let handle = handle
        try withSink { sink in
            try sink.activateOrThrow(handle)
            sink.writeKey(key)
            sink.writeSlot(value)
            sink.incrementCount(at: handle)
        }
    }

    mutating func encodeNil(forKey key: Key) throws {
        let handle = handle
        try withSink { sink in
            try sink.activateOrThrow(handle)
            sink.writeKey(key)
            sink.writeNilSlot()
            sink.incrementCount(at: handle)
        }
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: String, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: Int128, forKey key: Key) throws { try writePrimitive(value, forKey: key) }
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try writePrimitive(value, forKey: key) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let handle = handle
        try withSink { sink in
            try sink.activateOrThrow(handle)
            sink.writeKey(key)
            try sink.writeSlot(value, key: key)
            sink.incrementCount(at: handle)
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = openNestedSlot(forKey: key, content: .keyed)
        return BinaryKeyedEncodingContainer<NestedKey>.make(sink: sink, handle: nested)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        BinaryUnkeyedEncodingContainer(sink: sink, handle: openNestedSlot(forKey: key, content: .unkeyed))
    }

    mutating func superEncoder() -> any Encoder {
        BinaryValueEncoder(sink: sink, handle: openNestedSlot(forKey: BinaryCodingKey.superKey, content: .empty))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        BinaryValueEncoder(sink: sink, handle: openNestedSlot(forKey: key, content: .empty))
    }

    /// Writes the key and opens a slot that stays open until this container (or an outer
    /// one) is used again. A stale handle yields a stale nested handle; the error is
    /// recorded and thrown at the end of encoding.
    private func openNestedSlot(forKey key: some CodingKey, content: BinaryEncodingFrame.Content) -> BinaryFrameHandle {
        guard sink.activate(handle) else {
            sink.openContainer(.keyed, at: handle)  // records the stale-handle error
            return BinaryFrameHandle(depth: Int.max, id: 0)
        }
        sink.writeKey(key)
        sink.incrementCount(at: handle)
        return sink.openSlot(key: key, content: content)
    }
}

/// Keeps an on-demand keyed container's sink alive and owns its frame handle.
final class BinaryKeyedEncodingContainerOwner {
    let sink: BinaryEncodingSink
    let handle: UnsafeMutablePointer<BinaryFrameHandle>

    init(sink: BinaryEncodingSink, handle: BinaryFrameHandle) {
        self.sink = sink
        self.handle = .allocate(capacity: 1)
        self.handle.initialize(to: handle)
    }

    deinit { handle.deallocate() }
}
