/// Reads an unkeyed container (`[element count]` then `[value len][value]`…) sequentially.
///
/// An element is consumed only when it decodes successfully (as the `Codable` contract
/// expects, e.g. for `decodeNil()` returning `false`).
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    private let bytes: UnsafeRawBufferPointer
    private let context: BinaryDecodingContext
    private let pathNode: Int
    private let elementCount: Int
    private var offset: Int
    private(set) var currentIndex = 0

    init(bytes: UnsafeRawBufferPointer, context: BinaryDecodingContext, pathNode: Int) throws {
        let header = try BinaryValueDecoder.readContainerHeader(
            bytes, minimumEntrySize: BinaryContainerLayout.minimumUnkeyedEntrySize, kind: "unkeyed", codingPath: context.codingPath(at: pathNode))
        self.bytes = bytes
        self.context = context
        self.pathNode = pathNode
        self.elementCount = header.count
        self.offset = header.entriesStart
    }

    var codingPath: [any CodingKey] { context.codingPath(at: pathNode) }
    var count: Int? { elementCount }
    var isAtEnd: Bool { currentIndex >= elementCount }

    private var elementKey: BinaryCodingKey { BinaryCodingKey(intValue: currentIndex) }
    private var elementPath: [any CodingKey] { codingPath + [elementKey] }

    /// The next element's bytes and the offset after it, without consuming it.
    private func peek(_ type: Any.Type) throws -> (bytes: UnsafeRawBufferPointer, next: Int) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: elementPath, debugDescription: "Unkeyed container is at end (\(elementCount) element(s))"))
        }
        do {
            let element = try BinaryContainerLayout.element(in: bytes, at: offset)
            return (UnsafeRawBufferPointer(rebasing: bytes[element]), element.upperBound)
        } catch {
            throw error.decodingError(codingPath: elementPath)
        }
    }

    private mutating func consume(upTo next: Int) {
        offset = next
        currentIndex += 1
    }

    private func elementNode() throws -> Int {
        try context.appendPathNode(parent: pathNode, key: elementKey)
    }

    mutating func decodeNil() throws -> Bool {
        let (element, next) = try peek(Any.self)
        guard element.isEmpty else { return false }
        consume(upTo: next)
        return true
    }

    private mutating func primitive<T: BinaryPrimitive>(_: T.Type) throws -> T {
        let (element, next) = try peek(T.self)
        let value = try BinaryValueDecoder.decodePrimitive(T.self, from: element, codingPath: elementPath)
        consume(upTo: next)
        return value
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try primitive(type) }
    mutating func decode(_ type: String.Type) throws -> String { try primitive(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try primitive(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try primitive(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try primitive(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try primitive(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try primitive(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try primitive(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try primitive(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try primitive(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try primitive(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try primitive(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try primitive(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try primitive(type) }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try primitive(type) }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try primitive(type) }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (element, next) = try peek(T.self)
        let value = try BinaryValueDecoder.decodeValue(
            T.self, from: element, context: context, parentPath: pathNode, key: elementKey)
        consume(upTo: next)
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (element, next) = try peek(KeyedDecodingContainer<NestedKey>.self)
        let container = try BinaryKeyedDecodingContainer<NestedKey>.make(bytes: element, context: context, pathNode: try elementNode())
        consume(upTo: next)
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (element, next) = try peek((any UnkeyedDecodingContainer).self)
        let container = try BinaryUnkeyedDecodingContainer(bytes: element, context: context, pathNode: try elementNode())
        consume(upTo: next)
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let (element, next) = try peek((any Decoder).self)
        let decoder = BinaryValueDecoder(context: context, extent: context.extent(of: element), pathNode: try elementNode())
        consume(upTo: next)
        return decoder
    }
}
