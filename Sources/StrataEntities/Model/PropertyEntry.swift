import Foundation
import Strata

/// One entry of a property's history: the value it was given (nil: the property was removed),
/// when, and an optional semantic type label (what the value means, e.g. "email" for a string).
///
/// Entries are only ever added: setting a property appends one, removing it appends one with a
/// nil value (a tombstone). The current value is the newest entry by datestamp; entries with
/// the same datestamp keep the order in which they were added.
public struct PropertyEntry: Hashable, Sendable {
    /// The value, or nil for a removal.
    public var value: EntityValue?
    /// When the value was set (or removed); the newest entry is the current one.
    public var datestamp: Date
    /// A semantic type label; nil when none was given.
    public var type: String?

    /// An entry giving `value` (nil: a removal) at `datestamp`, with an optional semantic label.
    public init(_ value: EntityValue?, datestamp: Date, type: String? = nil) {
        self.value = value
        self.datestamp = datestamp
        self.type = type
    }

    /// Whether this entry removes the property (a tombstone).
    public var isRemoval: Bool { value == nil }
}

extension PropertyEntry {
    /// Stored form: the label (ordered string, empty for none), then the tagged value or the
    /// tombstone tag. The datestamp lives in the key (history) or in front of the body (the
    /// current entries a `RecordHeader` keeps).
    func encodeBody(into writer: inout OrderedKeyWriter) {
        // An unlabelled entry (almost every one) writes the encoding of "" (its terminator)
        // directly: the string encoder normalizes and escapes even an empty string.
        if let type { writer.write(type) } else {
            writer.writeByte(0)
            writer.writeByte(0)
        }
        if let value { EntityValueCoding.encode(value, into: &writer) } else { writer.writeByte(EntityValueCoding.tombstoneTag) }
    }

    /// Whether a stored body's value may refer to entities (an entity or an array value), from
    /// its tag alone; true when the body cannot be read (the caller then decodes it and gets the
    /// error).
    static func mayReferToEntities(_ raw: UnsafeRawBufferPointer) -> Bool {
        var reader = OrderedKeyReader(raw)
        guard (try? reader.skipEscaped(reading: "entry label")) != nil,
              let tag = try? reader.readByte(reading: "value tag") else { return true }
        return tag == EntityValueCoding.entityTag || tag == EntityValueCoding.arrayTag
    }

    /// Decodes a stored body (the whole buffer).
    static func decodeBody(_ raw: UnsafeRawBufferPointer, datestamp: Date) throws -> PropertyEntry {
        // Most entries have no label: skip its empty encoding without building a string.
        if raw.count >= 3 && raw[0] == 0 && raw[1] == 0 {
            // The commonest value, an unlabelled short ASCII string, without the general decoder.
            if raw[2] == EntityValueCoding.stringTag, let string = EntityASCIIString.decode(wholeEncoding: UnsafeRawBufferPointer(rebasing: raw[3...])) {
                return PropertyEntry(.string(string), datestamp: datestamp)
            }
            // The next commonest, an unlabelled integer or double (the whole rest of the body; a
            // double that no writer produces goes on to the general decoder, which names it).
            if raw.count == 3 + MemoryLayout<Int64>.size {
                if raw[2] == EntityValueCoding.intTag { return PropertyEntry(.int(EntityFixedWidth.orderedInt(raw, at: 3)), datestamp: datestamp) }
                if raw[2] == EntityValueCoding.doubleTag, let double = EntityFixedWidth.orderedDouble(raw, at: 3) {
                    return PropertyEntry(.double(double), datestamp: datestamp)
                }
            }
            var reader = OrderedKeyReader(UnsafeRawBufferPointer(rebasing: raw[2...]))
            return try decodeValue(from: &reader, datestamp: datestamp, label: nil)
        }
        var reader = OrderedKeyReader(raw)
        return try decodeBody(from: &reader, datestamp: datestamp)
    }

    static func decodeBody(from reader: inout OrderedKeyReader, datestamp: Date) throws -> PropertyEntry {
        let label = try reader.read(String.self)
        return try decodeValue(from: &reader, datestamp: datestamp, label: label.isEmpty ? nil : label)
    }

    private static func decodeValue(from reader: inout OrderedKeyReader, datestamp: Date, label: String?) throws -> PropertyEntry {
        let tag = try reader.readByte(reading: "value tag")
        let value = tag == EntityValueCoding.tombstoneTag ? nil : try EntityValueCoding.decode(tag: tag, from: &reader)
        try reader.expectEnd()
        return PropertyEntry(value, datestamp: datestamp, type: label)
    }
}
