/// Decoding steps shared by the decoder and all container kinds: reading a nested value,
/// a primitive, or a container header from a value's bytes.
extension BinaryValueDecoder {
    /// Decodes a value stored in `bytes` whose coding path is already `pathNode`.
    static func decodeValue<T: Decodable>(
        _: T.Type, from bytes: UnsafeRawBufferPointer, context: BinaryDecodingContext, pathNode: Int
    ) throws -> T {
        // The decoder is built at each use: a closure stored in a local would be heap-allocated
        // on every call.
        if BinarySpecialValues.isSpecial(T.self) {
            return try BinarySpecialValues.decodeSpecial(T.self, from: bytes) {
                BinaryValueDecoder(context: context, extent: context.extent(of: bytes), pathNode: pathNode)
            }
        }
        return try T(from: BinaryValueDecoder(context: context, extent: context.extent(of: bytes), pathNode: pathNode))
    }

    /// Decodes a value stored under `key` of the container at `parentPath`. The path node is
    /// only created when a nested decoder is really needed.
    static func decodeValue<T: Decodable>(
        _: T.Type, from bytes: UnsafeRawBufferPointer, context: BinaryDecodingContext,
        parentPath: Int, key: @autoclosure () -> any CodingKey
    ) throws -> T {
        if BinarySpecialValues.isSpecial(T.self) {
            return try BinarySpecialValues.decodeSpecial(T.self, from: bytes) {
                let node = try context.appendPathNode(parent: parentPath, key: key())
                return BinaryValueDecoder(context: context, extent: context.extent(of: bytes), pathNode: node)
            }
        }
        let node = try context.appendPathNode(parent: parentPath, key: key())
        return try T(from: BinaryValueDecoder(context: context, extent: context.extent(of: bytes), pathNode: node))
    }

    /// Reads a primitive from its extent, converting format errors into `DecodingError`s.
    /// `codingPath` is an autoclosure: the path is only built on failure.
    static func decodePrimitive<T: BinaryPrimitive>(
        _: T.Type, from bytes: UnsafeRawBufferPointer, codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> T {
        guard !bytes.isEmpty else {
            throw DecodingError.valueNotFound(T.self, DecodingError.Context(
                codingPath: codingPath(), debugDescription: "Expected \(T.self) but found nil"))
        }
        do {
            return try T.readBinary(from: bytes)
        } catch {
            throw error.decodingError(codingPath: codingPath())
        }
    }

    /// Parses the entry count that starts every container (`BinaryContainerLayout.readHeader`),
    /// as a `DecodingError` at `codingPath`; an empty extent (nil) is `valueNotFound`.
    static func readContainerHeader(
        _ bytes: UnsafeRawBufferPointer, minimumEntrySize: Int, kind: StaticString,
        codingPath: @autoclosure () -> [any CodingKey]
    ) throws -> (count: Int, entriesStart: Int) {
        guard !bytes.isEmpty else {
            throw DecodingError.valueNotFound(Any.self, DecodingError.Context(
                codingPath: codingPath(), debugDescription: "Expected a \(kind) container but found nil"))
        }
        do {
            return try BinaryContainerLayout.readHeader(bytes, minimumEntrySize: minimumEntrySize, kind: kind)
        } catch {
            throw error.decodingError(codingPath: codingPath())
        }
    }
}
