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
/// Owned by one `BinaryKeyedContainerCache` entry (one thread, one key type); plain pointers.
struct BinaryKeyNameTable {
    static let capacity = 32

    private let bits: UnsafeMutablePointer<UInt64>
    private let names: UnsafeMutablePointer<UnsafeRawBufferPointer>
    private var count = 0
    /// Where the next look-up starts: keys are usually asked in declaration order.
    private var next = 0
    /// Whether the table's key type qualifies (see above); decided at its first key.
    private var keyTypeQualifies: Bool?

    static func allocate() -> UnsafeMutablePointer<BinaryKeyNameTable> {
        let table = UnsafeMutablePointer<BinaryKeyNameTable>.allocate(capacity: 1)
        table.initialize(to: BinaryKeyNameTable(bits: .allocate(capacity: capacity), names: .allocate(capacity: capacity)))
        return table
    }

    private init(bits: UnsafeMutablePointer<UInt64>, names: UnsafeMutablePointer<UnsafeRawBufferPointer>) {
        self.bits = bits
        self.names = names
    }

    static func deallocate(_ table: UnsafeMutablePointer<BinaryKeyNameTable>) {
        for index in 0..<table.pointee.count {
            table.pointee.names[index].deallocate()
        }
        table.pointee.bits.deallocate()
        table.pointee.names.deallocate()
        table.deallocate()
    }

    /// The UTF-8 bytes of `key.stringValue`, valid as long as the table; nil if `Key` is not a
    /// key type this table can hold, or the table is full.
    @inline(__always)
    mutating func name<Key: CodingKey>(of key: Key) -> UnsafeRawBufferPointer? {
        guard let keyBits = Self.bits(of: key) else { return nil }
        if keyTypeQualifies == nil { keyTypeQualifies = Mirror(reflecting: key).displayStyle == .enum }
        guard keyTypeQualifies == true else { return nil }
        if next < count, bits[next] == keyBits {
            next += 1
            return names[next - 1]
        }
        return find(keyBits) ?? learn(key, bits: keyBits)
    }

    /// The key's bits, zero-extended; nil unless `Key` is plain bits of 0, 1 or 2 bytes.
    @inline(__always)
    private static func bits<Key: CodingKey>(of key: Key) -> UInt64? {
        guard _isPOD(Key.self) else { return nil }
        // `unsafeBitCast` of a value of a matching size is a plain load here, where
        // `withUnsafeBytes(of:)` on an unspecialized type is an outlined call with a closure.
        switch MemoryLayout<Key>.size {
        case 0: return 0
        case 1: return UInt64(unsafeBitCast(key, to: UInt8.self))
        case 2: return UInt64(unsafeBitCast(key, to: UInt16.self))
        default: return nil
        }
    }

    private mutating func find(_ keyBits: UInt64) -> UnsafeRawBufferPointer? {
        for index in 0..<count where bits[index] == keyBits {
            next = index + 1
            return names[index]
        }
        return nil
    }

    @inline(never)
    private mutating func learn(_ key: some CodingKey, bits keyBits: UInt64) -> UnsafeRawBufferPointer? {
        guard count < Self.capacity else { return nil }
        var name = key.stringValue
        let copy = name.withUTF8 { utf8 in
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: utf8.count, alignment: 1)
            copy.copyMemory(from: UnsafeRawBufferPointer(utf8))
            return UnsafeRawBufferPointer(copy)
        }
        bits[count] = keyBits
        names[count] = copy
        count += 1
        next = count
        return copy
    }
}
