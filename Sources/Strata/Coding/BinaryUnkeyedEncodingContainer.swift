/// Writes `[element count]` then, per element, `[value length][value]`.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer, BinaryPrimitiveEncoding {
    let sink: BinaryEncodingSink
    let handle: BinaryFrameHandle

    var codingPath: [any CodingKey] { sink.codingPath(depth: handle.depth) }
    var count: Int { sink.count(at: handle) }

    @inline(__always)
    func writePrimitive(_ value: some BinaryPrimitive) throws {
        try sink.activateOrThrow(handle)
        sink.writeSlot(value)
        sink.incrementCount(at: handle)
    }

    mutating func encodeNil() throws {
        try sink.activateOrThrow(handle)
        sink.writeNilSlot()
        sink.incrementCount(at: handle)
    }

    mutating func encode(_ value: Int128) throws { try writePrimitive(value) }
    mutating func encode(_ value: UInt128) throws { try writePrimitive(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try sink.activateOrThrow(handle)
        let index = sink.count(at: handle)
        try sink.writeSlot(value, key: BinaryCodingKey(intValue: index))
        sink.incrementCount(at: handle)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        BinaryKeyedEncodingContainer<NestedKey>.make(sink: sink, handle: openNestedSlot(content: .keyed))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        BinaryUnkeyedEncodingContainer(sink: sink, handle: openNestedSlot(content: .unkeyed))
    }

    mutating func superEncoder() -> any Encoder {
        BinaryValueEncoder(sink: sink, handle: openNestedSlot(content: .empty))
    }

    private func openNestedSlot(content: BinaryEncodingFrame.Content) -> BinaryFrameHandle {
        guard sink.activate(handle) else {
            sink.openContainer(.unkeyed, at: handle)  // records the stale-handle error
            return BinaryFrameHandle(depth: Int.max, id: 0)
        }
        let index = sink.count(at: handle)
        sink.incrementCount(at: handle)
        return sink.openSlot(key: BinaryCodingKey(intValue: index), content: content)
    }
}
