/// Reads the one value that fills the current extent; an empty extent is `nil`.
/// Three plain words, like `BinaryValueDecoder`, so it lives inline in its existential.
struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
    let context: BinaryDecodingContext
    let extent: BinaryExtent
    let pathNode: Int

    var codingPath: [any CodingKey] { context.codingPath(at: pathNode) }

    private var bytes: UnsafeRawBufferPointer { context.bytes(in: extent) }

    func decodeNil() -> Bool { extent.start == extent.end }

    private func primitive<T: BinaryPrimitive>(_: T.Type) throws -> T {
        try BinaryValueDecoder.decodePrimitive(T.self, from: bytes, codingPath: codingPath)
    }

    func decode(_ type: Bool.Type) throws -> Bool { try primitive(type) }
    func decode(_ type: String.Type) throws -> String { try primitive(type) }
    func decode(_ type: Double.Type) throws -> Double { try primitive(type) }
    func decode(_ type: Float.Type) throws -> Float { try primitive(type) }
    func decode(_ type: Int.Type) throws -> Int { try primitive(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try primitive(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try primitive(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try primitive(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try primitive(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try primitive(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try primitive(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try primitive(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try primitive(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try primitive(type) }
    func decode(_ type: Int128.Type) throws -> Int128 { try primitive(type) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try primitive(type) }

    /// The value fills this same extent, so it keeps this container's coding path.
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try BinaryValueDecoder.decodeValue(T.self, from: bytes, context: context, pathNode: pathNode)
    }
}
