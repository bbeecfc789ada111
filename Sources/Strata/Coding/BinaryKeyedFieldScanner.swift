/// Finds fields of one keyed container (`[field count]` then `[key len][key][value len][value]`…)
/// without building any per-field table or `String`s.
///
/// Lookup strategy: synthesized `init(from:)` asks for keys in the order the encoder wrote
/// them, so the field after the previous hit is checked first (O(1) per field). On a miss —
/// a field written by another schema version, or out-of-order access — all fields are
/// scanned. Keys are compared as UTF-8 bytes against the requested key's name (its
/// `stringValue`, or the bytes `BinaryKeyNameTable` learned for it).
///
/// A non-generic plain value: the hot path stays free of generic metadata and reference
/// counting. It lives in a `BinaryKeyedContainerState` that the container points to, because
/// lookups advance the position although `KeyedDecodingContainerProtocol` lookups are
/// non-mutating.
struct BinaryKeyedFieldScanner {
    let bytes: UnsafeRawBufferPointer
    let fieldCount: Int
    private let fieldsStart: Int
    /// Index of the field following the last hit, and its byte offset.
    private var nextIndex = 0
    private var nextOffset: Int

    init(bytes: UnsafeRawBufferPointer, fieldCount: Int, fieldsStart: Int) {
        self.bytes = bytes
        self.fieldCount = fieldCount
        self.fieldsStart = fieldsStart
        self.nextOffset = fieldsStart
    }

    private struct Field {
        let key: Range<Int>
        let value: Range<Int>
    }

    @inline(__always)
    private func parseField(at offset: Int) throws(BinaryFormatError) -> Field {
        let entry = try BinaryContainerLayout.keyedEntry(in: bytes, at: offset)
        return Field(key: entry.key, value: entry.value)
    }

    /// Compares a stored key with the requested key's UTF-8 bytes using word-sized loads
    /// (keys are short; a byte loop was the hottest spot of decoding). Loads may overlap but
    /// never leave either buffer: offsets stay within `0..<count`.
    @inline(__always)
    private func key(_ range: Range<Int>, equals name: UnsafeRawBufferPointer) -> Bool {
        let count = name.count
        guard range.count == count else { return false }
        guard count > 0, let storedBase = bytes.baseAddress, let nameBase = name.baseAddress else { return true }
        let stored = storedBase + range.lowerBound
        let wanted = nameBase
        func same<Word: FixedWidthInteger>(_: Word.Type, at offset: Int) -> Bool {
            stored.loadUnaligned(fromByteOffset: offset, as: Word.self) == wanted.loadUnaligned(fromByteOffset: offset, as: Word.self)
        }
        switch count {
        case 1...3:
            return same(UInt8.self, at: 0) && same(UInt8.self, at: count / 2) && same(UInt8.self, at: count - 1)
        case 4...8:
            return same(UInt32.self, at: 0) && same(UInt32.self, at: count - 4)
        default:
            var offset = 0
            while offset + 8 < count {
                guard same(UInt64.self, at: offset) else { return false }
                offset += 8
            }
            return same(UInt64.self, at: count - 8)
        }
    }

    /// The value extent stored under `name`, or `nil` if the field is absent. For keys whose
    /// names `BinaryKeyNameTable` does not hold; the lookup itself is `valueBytes(named:)` on
    /// the name's UTF-8 bytes.
    @inline(__always)
    mutating func valueBytes(named name: String) throws(BinaryFormatError) -> UnsafeRawBufferPointer? {
        var name = name
        // `withUTF8` gives direct access to the key's bytes (inline for small strings); its
        // closure cannot throw a typed error, so the result is carried out as a `Result`.
        return try name.withUTF8 { utf8 in
            Result { () throws(BinaryFormatError) in try valueBytes(named: UnsafeRawBufferPointer(utf8)) }
        }.get()
    }

    /// `valueBytes(named:)` for a key name given as its UTF-8 bytes (see `BinaryKeyNameTable`).
    ///
    /// Inlined: the usual case (the next stored field, with a key and a value shorter than 128
    /// bytes, so one-byte lengths) is a few loads, bounds checks and one key compare; everything
    /// else goes to `valueBytesInGeneral`.
    @inline(__always)
    mutating func valueBytes(named name: UnsafeRawBufferPointer) throws(BinaryFormatError) -> UnsafeRawBufferPointer? {
        if nextIndex < fieldCount, let base = bytes.baseAddress {
            let offset = nextOffset, end = bytes.count
            if offset < end {
                let keyLength = Int(base.load(fromByteOffset: offset, as: UInt8.self))
                let valueLengthAt = offset + 1 + keyLength
                // `valueLengthAt < end` also puts the key's bytes within the buffer.
                if keyLength < 0x80, keyLength == name.count, valueLengthAt < end {
                    let valueLength = Int(base.load(fromByteOffset: valueLengthAt, as: UInt8.self))
                    let valueStart = valueLengthAt + 1
                    if valueLength < 0x80, valueLength <= end - valueStart,
                       key(Range(uncheckedBounds: (offset + 1, valueLengthAt)), equals: name) {
                        nextIndex += 1
                        nextOffset = valueStart + valueLength
                        return UnsafeRawBufferPointer(start: base + valueStart, count: valueLength)
                    }
                }
            }
        }
        return try valueBytesInGeneral(named: name)
    }

    /// The next stored field's value if that field's entry starts with `header` (a key's
    /// `[key length][key]`, `BinaryKeyNameTable.LearnedKey.storedHeader`) and its value length
    /// is one byte; nil otherwise, and nothing moves (the caller then asks `valueBytes(named:)`,
    /// which also finds fields out of order and reports damage).
    ///
    /// The usual case of a synthesized `init(from:)` reading a record written by the same type:
    /// the length byte and the key are checked together by one or two word loads. Loads stay
    /// within the buffer: the header's bytes end before the value length byte, which lies inside
    /// it, and a header of at most 8 bytes is loaded as one word only when 8 bytes remain.
    @inline(__always)
    mutating func nextValue(ifKeyHeaderIs header: BinaryShortPrefix) -> UnsafeRawBufferPointer? {
        guard nextIndex < fieldCount, let base = bytes.baseAddress, header.isComparable else { return nil }
        let offset = nextOffset, end = bytes.count
        let valueLengthAt = offset + header.count
        guard valueLengthAt < end, end - offset >= 8, header.matches(at: base + offset) else { return nil }
        let valueLength = Int(base.load(fromByteOffset: valueLengthAt, as: UInt8.self))
        let valueStart = valueLengthAt + 1
        guard valueLength < 0x80, valueLength <= end - valueStart else { return nil }
        nextIndex += 1
        nextOffset = valueStart + valueLength
        return UnsafeRawBufferPointer(start: base + valueStart, count: valueLength)
    }

    /// `valueBytes(named:)` for any lengths and any order.
    @inline(never)
    private mutating func valueBytesInGeneral(named name: UnsafeRawBufferPointer) throws(BinaryFormatError) -> UnsafeRawBufferPointer? {
        if nextIndex < fieldCount {
            let field = try parseField(at: nextOffset)
            if key(field.key, equals: name) {
                nextIndex += 1
                nextOffset = field.value.upperBound
                return UnsafeRawBufferPointer(rebasing: bytes[field.value])
            }
        }
        return try scanAllFields(for: name)
    }

    /// The slow path of `valueBytes(named:)`: a field asked for out of stored order, or one
    /// this record does not hold (written by another version of the type). Moves the position
    /// behind the field found, so a decode that resumes stored order is fast again.
    @inline(never)
    private mutating func scanAllFields(for name: UnsafeRawBufferPointer) throws(BinaryFormatError) -> UnsafeRawBufferPointer? {
        var offset = fieldsStart
        for index in 0..<fieldCount {
            let field = try parseField(at: offset)
            if key(field.key, equals: name) {
                nextIndex = index + 1
                nextOffset = field.value.upperBound
                return UnsafeRawBufferPointer(rebasing: bytes[field.value])
            }
            offset = field.value.upperBound
        }
        return nil
    }

    /// Every key present, in stored order; stops quietly at the first damaged field because
    /// `allKeys` cannot throw (reading that field's value will report the damage).
    var keyNames: [String] {
        var names: [String] = []
        var offset = fieldsStart
        for _ in 0..<fieldCount {
            guard let field = try? parseField(at: offset) else { break }
            names.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[field.key]), as: UTF8.self))
            offset = field.value.upperBound
        }
        return names
    }
}
