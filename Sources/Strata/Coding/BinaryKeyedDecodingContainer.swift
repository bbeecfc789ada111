import Foundation

/// Reads a keyed container. Byte-level work is done by the non-generic
/// `BinaryKeyedFieldScanner`; this wrapper adapts typed keys and errors.
///
/// One pointer to its state (see `BinaryKeyedContainerState`): the standard library copies
/// the container on every call, so that copy must be a plain word, and the state can be
/// rewritten when `BinaryKeyedContainerCache` hands this container's box out again.
struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    private let state: UnsafeMutablePointer<BinaryKeyedContainerState>

    init(state: UnsafeMutablePointer<BinaryKeyedContainerState>) {
        self.state = state
    }

    /// The container over `bytes` at `pathNode`: a cached box when one is free
    /// (`BinaryKeyedContainerCache`), else a new one with its state in the context.
    static func make(bytes: UnsafeRawBufferPointer, context: BinaryDecodingContext, pathNode: Int) throws -> KeyedDecodingContainer<Key> {
        let initial = try BinaryKeyedContainerState(bytes: bytes, context: context, pathNode: pathNode)
        guard let cache = context.containerCache else {
            return KeyedDecodingContainer(BinaryKeyedDecodingContainer(state: context.makeKeyedState(initial)))
        }
        return cache.container(Key.self, state: initial) { initial in
            KeyedDecodingContainer(BinaryKeyedDecodingContainer(state: context.makeKeyedState(initial)))
        }
    }

    private var context: BinaryDecodingContext { state.pointee.context }
    private var pathNode: Int { state.pointee.pathNode }

    var codingPath: [any CodingKey] { context.codingPath(at: pathNode) }

    private func path(appending key: some CodingKey) -> [any CodingKey] {
        codingPath + [key]
    }

    /// The value stored under `key`, or nil if the record has no such field.
    ///
    /// Inlined into every `decode` method, so it is kept to the usual case: a key whose name the
    /// thread's `BinaryKeyNameTable` knows, and the next stored field (its length byte and key
    /// compared as one stored header). Asking a key for its
    /// `stringValue` and building errors (which need `any CodingKey` boxes and paths) are out of
    /// line: in unspecialized generic code, such set-up runs on every call, not only when used.
    @inline(__always)
    private func valueBytes(forKey key: Key) throws -> UnsafeRawBufferPointer? {
        let state = self.state
        guard let keyNames = state.pointee.keyNames, let learned = keyNames.pointee.name(of: key) else {
            return try valueBytes(byStringValueOf: key)
        }
        if let value = state.pointee.fields.nextValue(ifKeyHeaderIs: learned.pointee.storedHeader) { return value }
        do {
            return try state.pointee.fields.valueBytes(named: learned.pointee.name)
        } catch {
            throw failure(error, forKey: key)
        }
    }

    /// `valueBytes(forKey:)` for a key the name table does not hold: by its `stringValue`.
    @inline(never)
    private func valueBytes(byStringValueOf key: Key) throws -> UnsafeRawBufferPointer? {
        do {
            return try state.pointee.fields.valueBytes(named: key.stringValue)
        } catch {
            throw failure(error, forKey: key)
        }
    }

    /// Damage found while reading the field under `key`, as a `DecodingError` at its path.
    @inline(never)
    private func failure(_ error: BinaryFormatError, forKey key: Key) -> DecodingError {
        error.decodingError(codingPath: path(appending: key))
    }

    @inline(never)
    private func missing(_ key: Key) -> DecodingError {
        DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value for key '\(key.stringValue)'"))
    }

    @inline(never)
    private func foundNil<T>(_: T.Type, forKey key: Key) -> DecodingError {
        DecodingError.valueNotFound(T.self, DecodingError.Context(codingPath: path(appending: key), debugDescription: "Expected \(T.self) but found nil"))
    }

    @inline(__always)
    private func requiredValueBytes(forKey key: Key) throws -> UnsafeRawBufferPointer {
        guard let bytes = try valueBytes(forKey: key) else { throw missing(key) }
        return bytes
    }

    // MARK: KeyedDecodingContainerProtocol

    var allKeys: [Key] {
        state.pointee.fields.keyNames.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        ((try? valueBytes(forKey: key)) ?? nil) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try requiredValueBytes(forKey: key).isEmpty
    }

    // Always inlined into the typed `decode` methods below, so each one calls a specialized
    // `readBinary` instead of going through generic metadata and witnesses (the container is
    // generic over `Key`, which blocks specialization of an outlined call).
    @inline(__always)
    private func primitive<T: BinaryPrimitive>(_: T.Type, forKey key: Key) throws -> T {
        let bytes = try requiredValueBytes(forKey: key)
        guard !bytes.isEmpty else { throw foundNil(T.self, forKey: key) }
        do {
            return try T.readBinary(from: bytes)
        } catch {
            throw failure(error, forKey: key)
        }
    }

    @inline(__always)
    private func primitiveIfPresent<T: BinaryPrimitive>(_: T.Type, forKey key: Key) throws -> T? {
        guard let bytes = try valueBytes(forKey: key), !bytes.isEmpty else { return nil }
        do {
            return try T.readBinary(from: bytes)
        } catch {
            throw failure(error, forKey: key)
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try primitive(type, forKey: key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        // Most stored strings are short ASCII: one length byte, then at most 15 bytes.
        let bytes = try requiredValueBytes(forKey: key)
        if state.pointee.shortcuts.smallStrings, let string = BinarySmallString.lengthPrefixedASCII(confirmed: bytes) { return string }
        guard !bytes.isEmpty else { throw foundNil(String.self, forKey: key) }
        do {
            return try String.readBinary(from: bytes)
        } catch {
            throw failure(error, forKey: key)
        }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try primitive(type, forKey: key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try primitive(type, forKey: key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try primitive(type, forKey: key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try primitive(type, forKey: key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try primitive(type, forKey: key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try primitive(type, forKey: key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try primitive(type, forKey: key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try primitive(type, forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try primitive(type, forKey: key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try primitive(type, forKey: key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try primitive(type, forKey: key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try primitive(type, forKey: key) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try primitive(type, forKey: key) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try primitive(type, forKey: key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let bytes = try requiredValueBytes(forKey: key)
        // Compact UUID and Date fields are read right here, without a nested decoder or path node.
        if T.self == UUID.self, let uuid = BinarySpecialValues.compactUUID(bytes, bitCast: state.pointee.shortcuts.uuidBytes) { return unsafeBitCast(uuid, to: T.self) }
        if T.self == Date.self, let date = BinarySpecialValues.compactDate(bytes) { return unsafeBitCast(date, to: T.self) }
        return try BinaryValueDecoder.decodeValue(T.self, from: bytes, context: context, parentPath: pathNode, key: key)
    }

    // The standard library's default `decodeIfPresent` performs three lookups
    // (contains, decodeNil, decode); these do one.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? { try primitiveIfPresent(type, forKey: key) }
    func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? { try primitiveIfPresent(type, forKey: key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let bytes = try valueBytes(forKey: key), !bytes.isEmpty else { return nil }
        if T.self == UUID.self, let uuid = BinarySpecialValues.compactUUID(bytes, bitCast: state.pointee.shortcuts.uuidBytes) { return unsafeBitCast(uuid, to: T.self) }
        if T.self == Date.self, let date = BinarySpecialValues.compactDate(bytes) { return unsafeBitCast(date, to: T.self) }
        return try BinaryValueDecoder.decodeValue(T.self, from: bytes, context: context, parentPath: pathNode, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let bytes = try requiredValueBytes(forKey: key)
        let node = try context.appendPathNode(parent: pathNode, key: key)
        return try BinaryKeyedDecodingContainer<NestedKey>.make(bytes: bytes, context: context, pathNode: node)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let bytes = try requiredValueBytes(forKey: key)
        let node = try context.appendPathNode(parent: pathNode, key: key)
        return try BinaryUnkeyedDecodingContainer(bytes: bytes, context: context, pathNode: node)
    }

    /// A missing super value decodes as nil, mirroring how an omitted field reads.
    func superDecoder() throws -> any Decoder {
        try decoder(named: BinaryCodingKey.superKey.stringValue, key: BinaryCodingKey.superKey)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try decoder(named: key.stringValue, key: key)
    }

    private func decoder(named name: String, key: some CodingKey) throws -> BinaryValueDecoder {
        let bytes: UnsafeRawBufferPointer?
        do { bytes = try state.pointee.fields.valueBytes(named: name) } catch {
            throw error.decodingError(codingPath: path(appending: key))
        }
        let extent = bytes.map { context.extent(of: $0) } ?? BinaryExtent(start: 0, end: 0)
        return BinaryValueDecoder(context: context, extent: extent, pathNode: try context.appendPathNode(parent: pathNode, key: key))
    }
}
