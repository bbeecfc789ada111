/// Decodes values written by `BinaryInstanceEncoder`.
///
/// Safety: every length is checked against the bytes that remain before it is used, so
/// corrupt or truncated input throws (`DecodingError.dataCorrupted` for structural damage;
/// `keyNotFound`/`valueNotFound` where damage yields well-formed but unexpected data) and
/// never reads out of bounds or allocates according to a forged length. Nesting is limited
/// to `BinaryDecodingContext.maximumDepth` (256) levels so that forged input for a
/// recursive type cannot exhaust the stack.
///
/// Speed: the decoder works directly on the caller's buffer, keyed containers are scanned
/// lazily with keys compared as UTF-8 bytes in stored order, and decoders/containers are
/// plain values (see `BinaryDecodingContext`). The standard library's box around each keyed
/// container is reused per thread and key type (`BinaryKeyedContainerCache`), and so is the
/// decode's state (`BinaryDecodingThread`), so decoding a flat struct allocates nothing but its
/// result.
public struct BinaryInstanceDecoder: Sendable {
    public init() {}

    /// Decodes from memory that only needs to stay valid for the duration of the call.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        guard bytes.count <= Int(UInt32.max) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: [], debugDescription: "Binary instances larger than 4 GiB are not supported"))
        }
        let context = BinaryDecodingContext.begin(buffer: bytes)
        defer { context.end() }
        return try BinaryValueDecoder.decodeValue(T.self, from: bytes, context: context, pathNode: BinaryDecodingContext.rootPath)
    }

    /// `decode(_:from:)` for a datastore's instances: the same decode, without building a
    /// decoder value or an extent from pointers first. `isSpecial`: whether `T` is one of
    /// `BinarySpecialValues`' types (`BinarySpecialValues.isSpecial(T.self)`), which the caller
    /// decides once per type, not per instance (three metadata compares each time).
    static func decodeInstance<T: Decodable>(_: T.Type, from bytes: UnsafeRawBufferPointer, isSpecial: Bool) throws -> T {
        guard bytes.count <= Int(UInt32.max), !isSpecial else {
            return try BinaryInstanceDecoder().decode(T.self, from: bytes)
        }
        let context = BinaryDecodingContext.begin(buffer: bytes)
        defer { context.end() }
        return try T(from: BinaryValueDecoder(context: context, extent: BinaryExtent(start: 0, end: UInt32(bytes.count)),
                                              pathNode: BinaryDecodingContext.rootPath))
    }

    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { buffer in
            try decode(T.self, from: buffer)
        }
    }
}
