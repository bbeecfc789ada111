import Foundation

/// UUIDs encode as their 16 raw bytes (`uuid` tuple order).
///
/// Foundation on this toolchain (swift-foundation) already declares `UUID: Comparable`,
/// comparing the 16 bytes lexicographically, so no retroactive conformance is needed and the
/// byte order equals `<` (verified by tests). Random (v4) UUIDs therefore scatter across the
/// key space; time-ordered (v7) UUIDs sort by creation time.
extension UUID: OrderedKey {
    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        withUnsafeBytes(of: uuid) { writer.writeFixedWidthBytes($0) }
    }

    /// The 16 bytes of `uuid`, from the stack.
    public func withOrderedKeyBytes(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try withUnsafeBytes(of: uuid, body)
    }

    @inlinable public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> UUID {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        try withUnsafeMutableBytes(of: &raw) { try reader.readFixedWidthBytes(into: $0, reading: "UUID") }
        return UUID(uuid: raw)
    }
}
