/// The UTF-8 names (`stringValue`s) of one key type's keys, learned once per container-cache entry
/// (at most a few per thread and key type) and found again by the key's bits, so that looking a field up costs no `stringValue` call, no `String`
/// and no retain/release.
///
/// Why: the synthesized `init(from:)` passes each key as a value of its `CodingKeys` enum; asking
/// it for its `stringValue` (a witness call building a `String`, then reading its bytes) was a
/// tenth of decoding a field.
///
/// Which keys: only enums of plain bits of at most 2 bytes (`_isPOD`, `Mirror`'s `.enum`): every
/// synthesized `CodingKeys` (0 bytes for one case, 1 or 2 for more). Their bits name the case,
/// and a case's `stringValue` is fixed. A struct of integers is excluded on purpose: its bits can
/// be an index into a table that changes (a schema reloaded), or a pointer whose address is
/// reused, and a remembered name would then silently read the wrong field. Other key types are
/// asked for their `stringValue` every time, as before.
///
/// Each learned name comes with its stored entry header, `[key length][key]`, prepared for a word
/// compare (`BinaryShortPrefix`): `BinaryKeyedFieldScanner.nextValue(ifKeyHeaderIs:)` then checks
/// the next stored field's length byte and key with one or two loads.
///
/// Owned by one `BinaryKeyedContainerCache` entry (one thread, one key type); plain pointers.
struct BinaryKeyNameTable {
    static let capacity = 32

    /// A key's name and how its stored entry starts.
    struct LearnedKey {
        /// The UTF-8 bytes of the key's `stringValue` (owned by the table).
        let name: UnsafeRawBufferPointer
        /// `[name.count][name]` as the encoder writes it: not comparable for names of 16 bytes or
        /// more (their length byte and name exceed 16 bytes), which are compared by name alone.
        let storedHeader: BinaryShortPrefix
    }

    private let bits: UnsafeMutablePointer<UInt64>
    private let names: UnsafeMutablePointer<LearnedKey>
    private var count = 0
    /// Where the next look-up starts: keys are usually asked in declaration order (`count`: at 0).
    private var next = 0
    /// The key type's size in bytes (0, 1 or 2) once it is known to qualify (see above);
    /// `unknown` until its first key, `unqualified` for other key types.
    private(set) var keySize = BinaryKeyNameTable.unknown
    static var unknown: Int { -2 }
    static var unqualified: Int { -1 }

    static func allocate() -> UnsafeMutablePointer<BinaryKeyNameTable> {
        let table = UnsafeMutablePointer<BinaryKeyNameTable>.allocate(capacity: 1)
        table.initialize(to: BinaryKeyNameTable(bits: .allocate(capacity: capacity), names: .allocate(capacity: capacity)))
        return table
    }

    private init(bits: UnsafeMutablePointer<UInt64>, names: UnsafeMutablePointer<LearnedKey>) {
        self.bits = bits
        self.names = names
    }

    static func deallocate(_ table: UnsafeMutablePointer<BinaryKeyNameTable>) {
        for index in 0..<table.pointee.count {
            table.pointee.names[index].name.deallocate()
        }
        table.pointee.bits.deallocate()
        table.pointee.names.deallocate()
        table.deallocate()
    }

    /// The UTF-8 bytes of `key.stringValue` and its stored header, valid as long as the table; nil
    /// if `Key` is not a key type this table can hold, or the table is full.
    ///
    /// The usual case (a qualifying key type whose name is known) is inlined and touches no
    /// generic metadata but `Key`'s size; deciding whether the type qualifies and learning a
    /// name are out of line, so the caller's code carries none of their set-up.
    @inline(__always)
    mutating func name<Key: CodingKey>(of key: Key) -> UnsafePointer<LearnedKey>? {
        let size = keySize
        guard size >= 0 else {
            guard size == Self.unknown else { return nil }
            return qualifyAndName(of: key)
        }
        let keyBits: UInt64
        switch size {
        case 0: keyBits = 0
        case 1: keyBits = UInt64(unsafeBitCast(key, to: UInt8.self))
        default: keyBits = UInt64(unsafeBitCast(key, to: UInt16.self))
        }
        // After the last key the next instance starts again with the first: wrap around, so the
        // first field of every instance is found here too and not by `find`'s scan.
        let expected = next < count ? next : 0
        if expected < count, bits[expected] == keyBits {
            next = expected + 1
            return UnsafePointer(names + expected)
        }
        return find(keyBits) ?? learn(key, bits: keyBits)
    }

    /// Decides whether `Key` qualifies (on its first key), then answers as `name(of:)`.
    @inline(never)
    private mutating func qualifyAndName<Key: CodingKey>(of key: Key) -> UnsafePointer<LearnedKey>? {
        keySize = Self.qualifyingSize(of: key) ?? Self.unqualified
        return keySize >= 0 ? name(of: key) : nil
    }

    /// `Key`'s size if it is an enum of plain bits of at most 2 bytes (see the type's comment).
    private static func qualifyingSize<Key: CodingKey>(of key: Key) -> Int? {
        guard _isPOD(Key.self), MemoryLayout<Key>.size <= 2 else { return nil }
        return Mirror(reflecting: key).displayStyle == .enum ? MemoryLayout<Key>.size : nil
    }

    private mutating func find(_ keyBits: UInt64) -> UnsafePointer<LearnedKey>? {
        for index in 0..<count where bits[index] == keyBits {
            next = index + 1
            return UnsafePointer(names + index)
        }
        return nil
    }

    @inline(never)
    private mutating func learn<Key: CodingKey>(_ key: Key, bits keyBits: UInt64) -> UnsafePointer<LearnedKey>? {
        guard count < Self.capacity else { return nil }
        var name = key.stringValue
        let copy = name.withUTF8 { utf8 in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: utf8.count, alignment: 1)
            copy.copyMemory(from: UnsafeRawBufferPointer(utf8))
            return UnsafeRawBufferPointer(copy)
        }
        // A length below 128 is its one varint byte; longer names get no comparable header.
        let header = copy.count < 0x80 ? BinaryShortPrefix([UInt8(copy.count)] + copy) : BinaryShortPrefix([UInt8]())
        bits[count] = keyBits
        (names + count).initialize(to: LearnedKey(name: copy, storedHeader: header))
        count += 1
        next = count
        return UnsafePointer(names + count - 1)
    }
}
