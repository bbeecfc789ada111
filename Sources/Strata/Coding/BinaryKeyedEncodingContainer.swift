/// Writes `[field count]` then, per field, `[key length][key UTF-8][value length][value]`.
///
/// Fields appear in the order they are encoded (declaration order for synthesized Codable),
/// which the decoder exploits for O(1) lookups; `nil` optionals are simply omitted
/// (`encodeIfPresent`), which is what lets old readers skip and new readers miss fields.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let sink: BinaryEncodingSink
    let handle: BinaryFrameHandle

    var codingPath: [any CodingKey] { sink.codingPath(depth: handle.depth) }

    /// Inlined into each `encode` overload so the primitive's writer is called directly (this
    /// container is generic over `Key` and usually runs unspecialized).
    @inline(__always)
    private func writePrimitive(_ value: some BinaryPrimitive, forKey key: Key) throws {
        try sink.activateOrThrow(handle)
        sink.writeKey(key)
        sink.writeSlot(value)
        sink.incrementCount(at: handle)
    }

    mutating func encodeNil(forKey key: Key) throws {
        try sink.activateOrThrow(handle)
        sink.writeKey(key)
        sink.writeNilSlot()
        sink.incrementCount(at: handle)
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
        try sink.activateOrThrow(handle)
        sink.writeKey(key)
        try sink.writeSlot(value, key: key)
        sink.incrementCount(at: handle)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = openNestedSlot(forKey: key, content: .keyed)
        return KeyedEncodingContainer(BinaryKeyedEncodingContainer<NestedKey>(sink: sink, handle: nested))
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
