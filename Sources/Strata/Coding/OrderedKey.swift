/// A value that can be stored as a B+tree key whose bytes are compared with `memcmp`.
///
/// Conformers must uphold three invariants, which the whole index layer relies on:
///
/// 1. **Order preservation** — for any `a` and `b`,
///    `sign(a <=> b) == sign(memcmp(a.orderedKeyBytes, b.orderedKeyBytes))`, where
///    `memcmp` is unsigned byte-wise comparison and a strict prefix sorts first.
/// 2. **Self-delimitation (prefix-freedom)** — no encoding is a strict prefix of another
///    encoding of the same type, and a decoder can find where an encoding ends. This is what
///    makes a concatenation of encodings (a composite key) sort component by component.
/// 3. **Canonical form** — values that are `==` encode to identical bytes, and decoding an
///    encoding yields a value `==` to the original.
///
/// Documented exceptions are kept deliberately small: floating-point NaN, which `<` leaves
/// unordered but the key places after `+infinity` (see `OrderedKey+FloatingPoint.swift`),
/// and non-NFC `String`s, on which the standard library's own `<` is inconsistent (see
/// `OrderedKey+String.swift`); in both cases the key order is a consistent total order.
///
/// A key need not be `Comparable`: its order is its bytes'. Keys that are (every standard type,
/// `CompositeKey`, a raw-value enum that declares it) also work with Swift's range operators in
/// queries; the others (`Optional`) use `IndexRange`. Strata adds no `Comparable` conformance to
/// a type it does not own, so importing it changes no other code's `<`.
public protocol OrderedKey: Hashable, Sendable {
    /// Appends this value's order-preserving, self-delimiting encoding.
    ///
    /// Append only: the writer may already hold other bytes (a write path lends its key buffer,
    /// and a composite key's earlier parts come first). Do not call `removeAll()` or assign
    /// another writer; an insert that finds earlier bytes dropped throws `StrataError.misuse`.
    func encodeOrderedKey(into writer: inout OrderedKeyWriter)

    /// Reads exactly one encoding written by `encodeOrderedKey(into:)`, leaving the reader
    /// positioned just after it. Throws `OrderedKeyError` on truncated or invalid bytes.
    static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> Self

    /// Moves the reader past one encoding without building the value (to reach what follows it,
    /// e.g. the identifier in an index key). It must accept at least every encoding that
    /// `decodeOrderedKey` accepts and end where it would; the default decodes and drops.
    static func skipOrderedKey(in reader: inout OrderedKeyReader) throws

    /// Calls `body` with this value's complete encoding (the bytes of `orderedKeyBytes`), which
    /// is valid only during the call. Fixed-width keys (integers, `UUID`) and short strings
    /// already in normal form lend it from the stack, so a lookup by such a key allocates
    /// nothing; the default encodes into `orderedKeyBytes`.
    /// An implementation must lend exactly those bytes: loads by identifier use it and writes use
    /// `orderedKeyBytes`, so any other bytes would make loads miss (debug builds check it at
    /// each load). Keep the default unless profiling shows the encoding matters.
    /// Not generic over a result: called from unspecialized code, a generic result costs
    /// reabstraction thunks around `body` (the lookup hands its result out through `body`).
    func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows
}

extension OrderedKey {
    public static func skipOrderedKey(in reader: inout OrderedKeyReader) throws {
        _ = try decodeOrderedKey(from: &reader)
    }

    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try orderedKeyBytes.withUnsafeBytes(body)
    }
}

extension OrderedKey {
    /// The complete encoding of this value on its own.
    public var orderedKeyBytes: [UInt8] {
        var writer = OrderedKeyWriter()
        encodeOrderedKey(into: &writer)
        return writer.bytes
    }

    /// Decodes a value from a complete encoding; trailing bytes are an error because a key
    /// that does not consume its whole byte string was not produced by this type.
    public init(orderedKeyBytes bytes: [UInt8]) throws {
        self = try bytes.withUnsafeBytes { buffer in
            try Self(orderedKeyBuffer: buffer)
        }
    }

    /// Same as `init(orderedKeyBytes:)` but reads directly from memory (e.g. a page),
    /// without copying. The buffer only needs to stay valid for the duration of the call.
    public init(orderedKeyBuffer buffer: UnsafeRawBufferPointer) throws {
        var reader = OrderedKeyReader(buffer)
        let value = try Self.decodeOrderedKey(from: &reader)
        try reader.expectEnd()
        self = value
    }
}
