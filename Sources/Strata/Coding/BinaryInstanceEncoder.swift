/// Encodes `Encodable` values into Strata's compact binary instance format.
///
/// Format (all integers LEB128 varints unless stated):
/// - signed integers ZigZag-mapped; `Float`/`Double` 4/8-byte little-endian IEEE bits;
///   `Bool` one byte; `String` byte count + UTF-8.
/// - keyed container: field count, then per field key byte count + key UTF-8, value byte
///   count + value. Unknown fields can therefore be skipped and missing ones read as `nil`.
/// - unkeyed container: element count, then per element value byte count + value.
/// - `nil` is a zero-length value (every non-nil value is at least one byte); `nil`
///   optionals in keyed containers are omitted altogether.
/// - `Date`, `UUID` and `Data` use compact forms (see `BinarySpecialValues`).
/// - the top-level value is not length-prefixed.
///
/// Output is deterministic: the same value yields the same bytes (dictionary and set
/// entries are sorted by their encoded bytes).
///
/// Containers must be filled depth-first, as synthesized `Codable` does; interleaving writes
/// between a container and a previously opened nested container throws.
public struct BinaryInstanceEncoder: Sendable {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        try encode(value, after: [])
    }

    /// Encodes `value` after `prefix` in one buffer (an envelope's header, without a second copy
    /// of the payload; the buffer is copied into the returned array once). The sink records
    /// absolute positions, so a prefix shifts nothing.
    func encode<T: Encodable>(_ value: T, after prefix: [UInt8]) throws -> [UInt8] {
        var output: [UInt8] = []
        try encode(value, after: prefix, into: &output)
        return output
    }

    /// `encode(_:after:)` into `output`, replacing its bytes in its storage (a writer reuses one
    /// array from one instance to the next, see `InstanceBuffers`). `output` is unchanged if
    /// encoding throws.
    func encode<T: Encodable>(_ value: T, after prefix: [UInt8], into output: inout [UInt8]) throws {
        var sink = BinaryEncodingSinkCache.take(prefix: prefix)
        sink.isEncoding = true
        defer { BinaryEncodingSinkCache.recycle(&sink) }
        if BinarySpecialValues.appendIfSpecial(value, to: &sink.output) {
            sink.output.copy(replacing: &output)
            return
        }
        let root = sink.pushFrame(lengthPosition: nil, key: nil, ordering: .of(T.self))
        try value.encode(to: BinaryValueEncoder(sink: sink, handle: root))
        sink.close(root)
        if sink.hasDeferredError, let error = sink.deferredError { throw error }
        sink.output.copy(replacing: &output)
    }
}
