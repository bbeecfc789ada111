/// The UTF-8 names (`stringValue`s) of one key type's keys, learned once per thread and found
/// again by the key's bits, so that looking a field up costs no `stringValue` call, no `String`
/// and no retain/release.
///
/// Why: the synthesized `init(from:)` passes each key as a value of its `CodingKeys` enum; asking
/// it for its `stringValue` (a witness call building a `String`, then reading its bytes) was a
/// tenth of decoding a field.
///
/// Which keys: only key types whose values are plain bits of 1, 2, 4 or 8 bytes (`_isPOD`: enums
/// without payloads, such as every synthesized `CodingKeys`, and small structs of integers).
/// That a key's `stringValue` is a function of its value is part of what `CodingKey` means; two
/// values with the same bits are the same value. Other key types (those holding a `String`, say)
/// are asked for their `stringValue` every time, as before.
///
/// Owned by one `BinaryKeyedContainerCache` entry (one thread, one key type); plain pointers.
struct BinaryKeyNameTable {
    static let capacity = 32

    private let bits: UnsafeMutablePointer<UInt64>
    private let names: UnsafeMutablePointer<UnsafeRawBufferPointer>
    private var count = 0
    /// Where the next look-up starts: keys are usually asked in declaration order.
    private var next = 0

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
        if next < count, bits[next] == keyBits {
            next += 1
            return names[next - 1]
        }
        return find(keyBits) ?? learn(key, bits: keyBits)
    }

    /// The key's bits, zero-extended; nil unless `Key` is plain bits of 1, 2, 4 or 8 bytes.
    @inline(__always)
    private static func bits<Key: CodingKey>(of key: Key) -> UInt64? {
        guard _isPOD(Key.self) else { return nil }
        // `unsafeBitCast` of a value of a matching size is a plain load here, where
        // `withUnsafeBytes(of:)` on an unspecialized type is an outlined call with a closure.
        switch MemoryLayout<Key>.size {
        case 1: return UInt64(unsafeBitCast(key, to: UInt8.self))
        case 2: return UInt64(unsafeBitCast(key, to: UInt16.self))
        case 4: return UInt64(unsafeBitCast(key, to: UInt32.self))
        case 8: return unsafeBitCast(key, to: UInt64.self)
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
