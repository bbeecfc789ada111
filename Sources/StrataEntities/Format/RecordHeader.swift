import Foundation
import Glibc
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
    /// The current entries in their stored form (the part of the encoding after the type),
    /// sorted by encoded key. Kept as bytes, not an array of entries: an operation reads a
    /// header, changes one entry and writes it back, and building and encoding an entry array
    /// (two arrays per entry) cost more than the rest of a property change. Their structure and
    /// key order were checked when decoded (`init(_:typeName:)`) or written here; datestamps and
    /// bodies are checked when read.
    private(set) var entryBytes: [UInt8] = []

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

        var copied: CurrentEntry { CurrentEntry(name: Array(name), datestamp: datestamp, sequence: sequence, body: body.map { Array($0) }) }
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
        let (fields, entriesStart) = try Self.decodeFields(bytes, typeName: typeName)
        let entries = UnsafeRawBufferPointer(rebasing: bytes[entriesStart...])
        // The entries' structure and key order are checked here, their fields when they are
        // read: a walk over the keys, skipping the rest of each entry undecoded.
        var previous: UnsafeRawBufferPointer?
        var offset = 0
        while offset < entries.count {
            let nameStart = offset
            offset = try WantedKeys.endOfName(entries, from: offset)
            let name = UnsafeRawBufferPointer(rebasing: entries[nameStart..<offset])
            // Lookups search the entries by key: out of order they would miss one silently.
            if let previous, !Self.precedes(previous, name) { throw EntityError.corrupt(reason: "header entries out of key order") }
            previous = name
            _ = try WantedKeys.entryRest(entries, at: &offset)
        }
        self = fields
        entryBytes = Array(entries)
    }

    /// Decodes a stored header's fields and shows each current entry to `visit` without keeping
    /// it (the returned header has no current entries): reads decode only the entries they need.
    /// - Throws: `EntityError.corrupt` for a malformed header, and for entries out of key order
    ///   or a key listed twice (as `init` does: a read of every entry must not pick one of two
    ///   current values where a keyed read would pick the other).
    static func decode(_ bytes: UnsafeRawBufferPointer, typeName: (UnsafeRawBufferPointer) throws -> String = decodeName,
                       visit: (StoredEntry) throws -> Void) throws -> RecordHeader {
        let (fields, entriesStart) = try decodeFields(bytes, typeName: typeName)
        var previous: UnsafeRawBufferPointer?
        try visitEntries(UnsafeRawBufferPointer(rebasing: bytes[entriesStart...])) { stored, _ in
            if let previous, !precedes(previous, stored.name) { throw EntityError.corrupt(reason: "header entries out of key order") }
            previous = stored.name
            try visit(stored)
            return true
        }
        return fields
    }

    /// The fields before the current entries, and the offset where those begin. Read at their
    /// fixed offsets (status 0, created 1, modified 9, creation sequence 17, type label 25):
    /// every read of an entity decodes them.
    /// - Throws: `EntityError.corrupt` for a header cut short, an unknown status, a datestamp no
    ///   writer produces, or a type label without its terminator.
    static func decodeFields(_ bytes: UnsafeRawBufferPointer, typeName: (UnsafeRawBufferPointer) throws -> String) throws -> (RecordHeader, Int) {
        let typeStart = 25
        guard bytes.count >= typeStart else { throw EntityError.corrupt(reason: "record header of \(bytes.count) bytes") }
        let status = bytes[0]
        guard status <= 1 else { throw EntityError.corrupt(reason: "record status \(status)") }
        let created = try EntityFixedWidth.orderedDate(bytes, at: 1)
        let modified = try EntityFixedWidth.orderedDate(bytes, at: 9)
        let sequence = UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 17, as: UInt64.self))
        let typeEnd = try WantedKeys.endOfName(bytes, from: typeStart, reading: "type label")
        let type = try typeName(UnsafeRawBufferPointer(rebasing: bytes[typeStart..<typeEnd]))
        return (RecordHeader(isDeleted: status == 1, created: created, modified: modified, sequence: sequence, type: type), typeEnd)
    }

    /// Shows each entry of a current-entries section, with the bytes it spans, to `visit`
    /// until it returns false.
    private static func visitEntries(_ bytes: UnsafeRawBufferPointer, _ visit: (StoredEntry, Range<Int>) throws -> Bool) throws {
        var reader = OrderedKeyReader(bytes)
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
            let stored = StoredEntry(name: name, datestamp: datestamp, sequence: entrySequence, body: body)
            guard try visit(stored, nameStart..<reader.offset) else { return }
        }
    }

    /// Decodes a whole ordered string (a property key or type label).
    static func decodeName(_ raw: UnsafeRawBufferPointer) throws -> String {
        if let ascii = EntityASCIIString.decode(wholeEncoding: raw) { return ascii }
        var reader = OrderedKeyReader(raw)
        let name = try reader.read(String.self)
        try reader.expectEnd()
        return name
    }

    /// Whether `lhs` sorts before `rhs` (bytewise).
    static func precedes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        let common = min(lhs.count, rhs.count)
        let order = common == 0 ? 0 : memcmp(lhs.baseAddress!, rhs.baseAddress!, common)
        return order < 0 || (order == 0 && lhs.count < rhs.count)
    }

    /// Whether `lhs` sorts before `rhs` (bytewise).
    static func precedes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { lhs in rhs.withUnsafeBytes { precedes(lhs, $0) } }
    }

    /// Whether the two byte strings are equal.
    static func equal(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        lhs.count == rhs.count && (lhs.count == 0 || memcmp(lhs.baseAddress!, rhs.baseAddress!, lhs.count) == 0)
    }

    /// Appends the encoding to `bytes` (a write reuses one buffer for every header it puts).
    func encode(into bytes: inout [UInt8]) {
        bytes.append(isDeleted ? 1 : 0)
        bytes.appendOrderedDate(created)
        bytes.appendOrderedDate(modified)
        bytes.appendBigEndian(sequence)
        // A plain ASCII label (no zero byte, so nothing to escape; always NFC) is its UTF-8
        // bytes and the terminator; anything else goes through the ordered-key writer.
        var type = type
        let plain = type.withUTF8 { utf8 in
            guard EntityASCIIString.isPlainASCII(UnsafeRawBufferPointer(utf8)) else { return false }
            bytes.append(contentsOf: utf8)
            bytes.append(0)
            bytes.append(0)
            return true
        }
        if !plain {
            var label = OrderedKeyWriter(reservingCapacity: type.utf8.count + 2)
            label.write(type)
            bytes.appendBytes(label.bytes)
        }
        bytes.appendBytes(entryBytes)
    }

    private static func encode(_ entry: CurrentEntry, into bytes: inout [UInt8]) {
        if let body = entry.body {
            body.withUnsafeBytes { appendEntry(name: entry.name, datestamp: entry.datestamp, sequence: entry.sequence, body: $0, to: &bytes) }
        } else {
            appendEntry(name: entry.name, datestamp: entry.datestamp, sequence: entry.sequence, body: nil, to: &bytes)
        }
    }

    /// Appends the stored form of a current entry (`body` nil: kept in the history only).
    private static func appendEntry(name: [UInt8], datestamp: Date, sequence: UInt64, body: UnsafeRawBufferPointer?, to bytes: inout [UInt8]) {
        bytes.appendParts(count: name.count + 17 + (body.map { 4 + $0.count } ?? 0)) { cursor in
            cursor.write(name)
            cursor.writeOrderedDate(datestamp)
            cursor.writeBigEndian(sequence)
            if let body {
                cursor.writeByte(inlineMark)
                cursor.writeBigEndian(UInt32(body.count))
                cursor.write(body)
            } else {
                cursor.writeByte(historyMark)
            }
        }
    }

    /// Every current entry (removals included), in key order.
    func currentEntries() throws -> [CurrentEntry] {
        var entries: [CurrentEntry] = []
        try entryBytes.withUnsafeBytes { raw in
            try Self.visitEntries(raw) { stored, _ in
                entries.append(stored.copied)
                return true
            }
        }
        return entries
    }

    /// Replaces every current entry (`entries` sorted by key).
    mutating func setCurrentEntries(_ entries: [CurrentEntry]) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.count * 48)
        for entry in entries { Self.encode(entry, into: &bytes) }
        entryBytes = bytes
    }

    /// Shows the current entry of property `name` (nil when it has none) to `body`.
    func withCurrentEntry<Result>(named name: [UInt8], _ body: (StoredEntry?) throws -> Result) throws -> Result {
        try withCurrentEntry(at: locateCurrent(named: name), body)
    }

    /// Where the current entry of property `name` is (`found`) or would go, for
    /// `withCurrentEntry(at:_:)` and `setCurrent(name:datestamp:sequence:body:at:)`: a write
    /// that reads the entry it replaces walks the entries once.
    func locateCurrent(named name: [UInt8]) throws -> (span: Range<Int>, found: Bool) {
        try entryBytes.withUnsafeBytes { raw in try name.withUnsafeBytes { try Self.locate($0, in: raw) } }
    }

    /// What `locateCurrent` returns for a key that sorts after every current entry: not found,
    /// to go at the end (`setCurrent` appends it in place).
    var endLocation: (span: Range<Int>, found: Bool) { (entryBytes.count..<entryBytes.count, false) }

    /// `withCurrentEntry(named:_:)` for the entry `locateCurrent` found (nil when it found none).
    func withCurrentEntry<Result>(at located: (span: Range<Int>, found: Bool), _ body: (StoredEntry?) throws -> Result) throws -> Result {
        guard located.found else { return try body(nil) }
        return try entryBytes.withUnsafeBytes { raw in
            var entry: StoredEntry?
            try Self.visitEntries(UnsafeRawBufferPointer(rebasing: raw[located.span])) { stored, _ in
                entry = stored
                return false
            }
            return try body(entry)
        }
    }

    /// Makes the entry of property `name` (its ordered encoding) numbered `sequence`, dated
    /// `datestamp`, with `body` (`PropertyEntry.encodeBody`) its current entry, at the place
    /// `locateCurrent(named: name)` returned (the entries unchanged since). Rewritten in place
    /// when the entry it replaces has the same length (a value replaced by one of the same kind
    /// and size, the common change), appended when its key sorts last, spliced otherwise.
    mutating func setCurrent(name: [UInt8], datestamp: Date, sequence: UInt64, body: UnsafeRawBufferPointer,
                             at located: (span: Range<Int>, found: Bool)) {
        let (span, found) = located
        let isInline = body.count <= Self.inlineBodyLimit
        let length = name.count + 17 + (isInline ? 4 + body.count : 0)
        if !found && span.lowerBound == entryBytes.count {
            // A key after every other (a create puts its keys in the order of their encodings): appended in place
            // (no `reserveCapacity`: reserving the exact size would reallocate on every append).
            Self.appendEntry(name: name, datestamp: datestamp, sequence: sequence, body: isInline ? body : nil, to: &entryBytes)
            return
        }
        guard found, span.count == length else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(length)
            Self.appendEntry(name: name, datestamp: datestamp, sequence: sequence, body: isInline ? body : nil, to: &bytes)
            entryBytes.replaceSubrange(span, with: bytes)
            return
        }
        // Same key (the name stays), same length: overwrite the rest.
        entryBytes.withUnsafeMutableBytes { raw in
            var offset = span.lowerBound + name.count
            raw.storeBytes(of: EntityFixedWidth.orderedBits(of: datestamp).bigEndian, toByteOffset: offset, as: UInt64.self)
            raw.storeBytes(of: sequence.bigEndian, toByteOffset: offset + 8, as: UInt64.self)
            offset += 16
            guard isInline else {
                raw[offset] = Self.historyMark
                return
            }
            raw[offset] = Self.inlineMark
            raw.storeBytes(of: UInt32(body.count).bigEndian, toByteOffset: offset + 1, as: UInt32.self)
            if body.count > 0 { (raw.baseAddress! + offset + 5).copyMemory(from: body.baseAddress!, byteCount: body.count) }
        }
    }

    /// The bytes the current entry of property `name` spans in a current-entries section, or
    /// (not found) the empty range where it would go: a walk that skips each entry's datestamp,
    /// sequence and body without decoding them (the section was checked when it was read).
    private static func locate(_ name: UnsafeRawBufferPointer, in bytes: UnsafeRawBufferPointer) throws -> (span: Range<Int>, found: Bool) {
        var offset = 0
        while offset < bytes.count {
            let start = offset
            offset = try WantedKeys.endOfName(bytes, from: offset)
            let stored = UnsafeRawBufferPointer(rebasing: bytes[start..<offset])
            // Sorted by key: past `name`, it is absent.
            if precedes(name, stored) { return (start..<start, false) }
            _ = try WantedKeys.entryRest(bytes, at: &offset)
            if equal(stored, name) { return (start..<offset, true) }
        }
        return (bytes.count..<bytes.count, false)
    }
}

/// The current entry of a property (the last of its history) with its sequence number.
struct LatestEntry {
    var entry: PropertyEntry
    var sequence: UInt64
}
