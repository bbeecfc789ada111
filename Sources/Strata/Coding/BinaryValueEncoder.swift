/// The `Encoder` handed to `Encodable.encode(to:)` for one value (one frame).
///
/// A small struct (a sink reference and a frame handle) rather than a class, so encoding a
/// nested value allocates no encoder object.
struct BinaryValueEncoder: Encoder {
    let sink: BinaryEncodingSink
    let handle: BinaryFrameHandle

    var codingPath: [any CodingKey] { sink.codingPath(depth: handle.depth) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        sink.openContainer(.keyed, at: handle)
        return BinaryKeyedEncodingContainer<Key>.make(sink: sink, handle: handle)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        sink.openContainer(.unkeyed, at: handle)
        return BinaryUnkeyedEncodingContainer(sink: sink, handle: handle)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(sink: sink, handle: handle)
    }
}
