import Foundation
import Strata

/// The value of an entity's header entry (`EntityLayout.entries`, key id + `headerName`):
/// whether the entity is live, its datestamps, the sequence number of its creation (its key in
/// the `types` index), its type, and the current entry of each of its properties.
///
/// Why the current entries live here: reading an entity is then one lookup of one key, and
/// setting a property finds the entry it supersedes without a scan. The header is rewritten by
/// every transaction that changes the entity anyway (its `modified` follows the newest entry), so
/// keeping them costs bytes, not lookups; a write rewrites a header as long as the entity's
/// current entries. A body longer than `inlineBodyLimit` is not copied here (a blob would be
/// rewritten with every change of any property): the header keeps its datestamp and sequence,
/// which name its history entry, and a read fetches it from there.
///
/// Encoding: status byte (0 live, 1 deleted), created and modified (ordered dates), creation
/// sequence (u64 big-endian), type (ordered string); then for each current entry, in key order:
/// the key (ordered string), datestamp (ordered date), sequence (u64 big-endian), and either
/// `inlineMark` + body length (u32 big-endian) + the entry body (as in the history) or
/// `historyMark`. A deleted entity keeps a header with no entries (so its identifier never
/// comes back).
struct RecordHeader: Equatable {
    var isDeleted: Bool
    var created: Date
    var modified: Date
    var sequence: UInt64
    var type: String
    /// The current entry of each property (removals included), sorted by encoded key.
    var current: [CurrentEntry] = []

    static let inlineBodyLimit = 128
    static let inlineMark: UInt8 = 0
    static let historyMark: UInt8 = 1

    /// The current entry of one property, as the header keeps it.
    struct CurrentEntry: Equatable {
        /// The ordered encoding of the key.
        var name: [UInt8]
        var datestamp: Date
        var sequence: UInt64
        /// The entry's body (`PropertyEntry.encodeBody`), or nil when only its history entry holds it.
        var body: [UInt8]?
    }

    /// A current entry as met in stored bytes, without copying (valid during the visit only).
    struct StoredEntry {
        var name: UnsafeRawBufferPointer
        var datestamp: Date
        var sequence: UInt64
        var body: UnsafeRawBufferPointer?
    }

    init(isDeleted: Bool, created: Date, modified: Date, sequence: UInt64, type: String) {
        self.isDeleted = isDeleted
        self.created = created
        self.modified = modified
        self.sequence = sequence
        self.type = type
    }

    /// Decodes a stored header with all its current entries (`typeName` decodes the type's
    /// ordered encoding, e.g. through a cache).
    init(_ bytes: UnsafeRawBufferPointer, typeName: (UnsafeRawBufferPointer) throws -> String = Self.decodeName) throws {
        var entries: [CurrentEntry] = []
        self = try Self.decode(bytes, typeName: typeName) { stored in
            // Lookups search the entries by key: out of order they would miss one silently.
            if let last = entries.last, !last.name.lexicographicallyPrecedes(stored.name) {
                throw EntityError.corrupt(reason: "header entries out of key order")
            }
            entries.append(CurrentEntry(name: Array(stored.name), datestamp: stored.datestamp, sequence: stored.sequence, body: stored.body.map { Array($0) }))
        }
        current = entries
    }

    /// Decodes a stored header's fields and shows each current entry to `visit` without keeping
    /// it (the returned header's `current` is empty): reads decode only the entries they need.
    static func decode(_ bytes: UnsafeRawBufferPointer, typeName: (UnsafeRawBufferPointer) throws -> String = decodeName,
                       visit: (StoredEntry) throws -> Void) throws -> RecordHeader {
        var reader = OrderedKeyReader(bytes)
        let status = try reader.readByte(reading: "record status")
        guard status <= 1 else { throw EntityError.corrupt(reason: "record status \(status)") }
        let created = try reader.read(Date.self)
        let modified = try reader.read(Date.self)
        let sequence = try reader.readBigEndian(UInt64.self, reading: "creation sequence")
        let typeStart = reader.offset
        try reader.skipEscaped(reading: "type label")
        let type = try typeName(UnsafeRawBufferPointer(rebasing: bytes[typeStart..<reader.offset]))
        while !reader.isAtEnd {
            let nameStart = reader.offset
            try reader.skipEscaped(reading: "property key")
            let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<reader.offset])
            let datestamp = try reader.read(Date.self)
            let entrySequence = try reader.readBigEndian(UInt64.self, reading: "entry sequence")
            var body: UnsafeRawBufferPointer?
            switch try reader.readByte(reading: "entry storage") {
            case inlineMark:
                let length = Int(try reader.readBigEndian(UInt32.self, reading: "entry length"))
                guard length <= reader.remainingCount else { throw EntityError.corrupt(reason: "header entry of \(length) bytes, \(reader.remainingCount) left") }
                body = UnsafeRawBufferPointer(rebasing: bytes[reader.offset..<(reader.offset + length)])
                try reader.skip(length)
            case historyMark:
                body = nil
            case let mark:
                throw EntityError.corrupt(reason: "header entry storage \(mark)")
            }
            try visit(StoredEntry(name: name, datestamp: datestamp, sequence: entrySequence, body: body))
        }
        return RecordHeader(isDeleted: status == 1, created: created, modified: modified, sequence: sequence, type: type)
    }

    /// Decodes a whole ordered string (a property key or type label).
    static func decodeName(_ raw: UnsafeRawBufferPointer) throws -> String {
        var reader = OrderedKeyReader(raw)
        let name = try reader.read(String.self)
        try reader.expectEnd()
        return name
    }

    func encoded() -> [UInt8] {
        var writer = OrderedKeyWriter(reservingCapacity: 32 + type.utf8.count + current.count * 48)
        writer.writeByte(isDeleted ? 1 : 0)
        writer.write(created)
        writer.write(modified)
        writer.writeBigEndian(sequence)
        writer.write(type)
        for entry in current {
            entry.name.withUnsafeBytes { writer.writeFixedWidthBytes($0) }
            writer.write(entry.datestamp)
            writer.writeBigEndian(entry.sequence)
            if let body = entry.body {
                writer.writeByte(Self.inlineMark)
                writer.writeBigEndian(UInt32(body.count))
                body.withUnsafeBytes { writer.writeFixedWidthBytes($0) }
            } else {
                writer.writeByte(Self.historyMark)
            }
        }
        return writer.bytes
    }

    /// The index in `current` of the entry of `name`, or where it would go.
    func position(of name: [UInt8]) -> (index: Int, found: Bool) {
        var low = 0, high = current.count
        while low < high {
            let middle = (low + high) / 2
            if current[middle].name == name { return (middle, true) }
            if current[middle].name.lexicographicallyPrecedes(name) { low = middle + 1 } else { high = middle }
        }
        return (low, false)
    }

    /// Makes `entry` the current entry of its property.
    mutating func setCurrent(_ entry: CurrentEntry) {
        let (index, found) = position(of: entry.name)
        if found { current[index] = entry } else { current.insert(entry, at: index) }
    }

    /// The header's form of the current entry numbered `sequence` with this body.
    static func currentEntry(name: [UInt8], datestamp: Date, sequence: UInt64, body: [UInt8]) -> CurrentEntry {
        CurrentEntry(name: name, datestamp: datestamp, sequence: sequence, body: body.count <= inlineBodyLimit ? body : nil)
    }
}

/// The current entry of a property (the last of its history) with its sequence number.
struct LatestEntry {
    var entry: PropertyEntry
    var sequence: UInt64
}
