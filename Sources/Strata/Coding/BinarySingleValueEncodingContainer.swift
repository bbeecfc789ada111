/// Writes one value directly into the current frame's extent (no extra length prefix: the
/// extent is already delimited by the parent slot or the end of the buffer).
struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer, BinaryPrimitiveEncoding {
    let sink: BinaryEncodingSink
    let handle: BinaryFrameHandle

    var codingPath: [any CodingKey] { sink.codingPath(depth: handle.depth) }

    /// A single-value container may encode exactly one value.
    private func claim() throws {
        try sink.activateOrThrow(handle)
        guard sink.content(at: handle) == .empty else {
            throw EncodingError.invalidValue((), EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "A single value container was asked to encode a second value"))
        }
        sink.setContent(.single, at: handle)
    }

    func writePrimitive(_ value: some BinaryPrimitive) throws {
        try claim()
        value.appendBinary(to: &sink.output)
    }

    mutating func encodeNil() throws {
        try claim()  // nil is the empty extent
    }

    mutating func encode(_ value: Int128) throws { try writePrimitive(value) }
    mutating func encode(_ value: UInt128) throws { try writePrimitive(value) }

    /// The value takes over this frame: its own `encode(to:)` requests the container that
    /// fills this extent, so a wrapper encodes exactly like the value it wraps.
    mutating func encode<T: Encodable>(_ value: T) throws {
        try sink.activateOrThrow(handle)
        guard sink.content(at: handle) == .empty else {
            throw EncodingError.invalidValue(value, EncodingError.Context(
                codingPath: codingPath,
                debugDescription: "A single value container was asked to encode a second value"))
        }
        if BinarySpecialValues.appendIfSpecial(value, to: &sink.output) {
            sink.setContent(.single, at: handle)
            return
        }
        sink.setOrdering(.of(T.self), at: handle)
        try value.encode(to: BinaryValueEncoder(sink: sink, handle: handle))
        if sink.activate(handle), sink.content(at: handle) == .empty {
            // The value wrote nothing; record an empty container so the extent is non-nil
            // and a second encode is still rejected.
            sink.openContainer(.keyed, at: handle)
        }
    }
}
