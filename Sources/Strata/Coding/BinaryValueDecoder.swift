/// The `Decoder` handed to `Decodable.init(from:)` for one value.
///
/// Three plain words (context pointer, extent, path node): stored inline in an
/// `any Decoder` existential and copied without reference counting.
struct BinaryValueDecoder: Decoder {
    let context: BinaryDecodingContext
    let extent: BinaryExtent
    let pathNode: Int

    var codingPath: [any CodingKey] { context.codingPath(at: pathNode) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    private var bytes: UnsafeRawBufferPointer { context.bytes(in: extent) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        try BinaryKeyedDecodingContainer<Key>.make(bytes: bytes, context: context, pathNode: pathNode)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try BinaryUnkeyedDecodingContainer(bytes: bytes, context: context, pathNode: pathNode)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(context: context, extent: extent, pathNode: pathNode)
    }
}
