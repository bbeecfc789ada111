/// The byte layout of the binary coder's containers, read in one place for the decoder's
/// containers and the JSON renderer: `[entry count]` then the entries, a keyed entry being
/// `[key len][key][value len][value]` and an unkeyed one `[value len][value]` (lengths are varints).
enum BinaryContainerLayout {
    /// Smallest keyed entry: an empty key (1 length byte) and a nil value (1 length byte).
    static let minimumKeyedEntrySize = 2
    /// Smallest unkeyed entry: a nil value (1 length byte).
    static let minimumUnkeyedEntrySize = 1

    /// The entry count that starts every container, sanity-checked against the bytes left (each
    /// entry takes at least `minimumEntrySize` bytes), so a forged count can neither drive a huge
    /// loop nor a huge allocation; and where the entries start.
    static func readHeader(_ bytes: UnsafeRawBufferPointer, minimumEntrySize: Int,
                           kind: StaticString) throws(BinaryFormatError) -> (count: Int, entriesStart: Int) {
        var offset = 0
        let count = try BinaryVarint.read(from: bytes, at: &offset)
        let remaining = bytes.count - offset
        guard count <= UInt64(remaining / minimumEntrySize) else {
            throw BinaryFormatError("\(kind) container claims \(count) entries but only \(remaining) byte(s) follow")
        }
        return (Int(count), offset)
    }

    /// The key and value extents of the keyed entry at `offset`; both lie within `bytes`.
    @inline(__always)
    static func keyedEntry(in bytes: UnsafeRawBufferPointer, at offset: Int) throws(BinaryFormatError) -> (key: Range<Int>, value: Range<Int>) {
        var position = offset
        let keyLength = try BinaryVarint.readLength(from: bytes, at: &position, of: "key")
        let keyStart = position
        position += keyLength
        let valueLength = try BinaryVarint.readLength(from: bytes, at: &position, of: "value")
        // `readLength` guarantees both ranges lie within `bytes`.
        return (Range(uncheckedBounds: (keyStart, keyStart + keyLength)), Range(uncheckedBounds: (position, position + valueLength)))
    }

    /// The value extent of the unkeyed entry at `offset`; it lies within `bytes`.
    @inline(__always)
    static func element(in bytes: UnsafeRawBufferPointer, at offset: Int) throws(BinaryFormatError) -> Range<Int> {
        var position = offset
        let length = try BinaryVarint.readLength(from: bytes, at: &position, of: "element")
        return Range(uncheckedBounds: (position, position + length))
    }
}
