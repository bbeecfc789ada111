/// A byte string of 1 to 16 bytes prepared to be compared with the bytes at an address by one or
/// two word loads: what a stored envelope starts with (`EnvelopePrefixMatcher`), and a keyed
/// entry's stored key header, `[key length][key]` (`BinaryKeyNameTable`).
///
/// Why: both are checked for every decoded instance or field, where a byte loop, or a length check
/// and a key compare of their own, cost more than the rest of reading a small field.
///
/// Exactness: up to 8 bytes are compared as one word masked to their count; 9 to 16 bytes as
/// their first and last 8 bytes (overlapping loads of the same bytes: equal words mean equal
/// bytes). A longer or empty string is not word-comparable (`isComparable` false).
struct BinaryShortPrefix {
    /// The number of bytes compared; 0 if the string is not word-comparable.
    let count: Int
    /// The first 8 bytes as loaded from memory (zero beyond `count`).
    private let head: UInt64
    /// Ones over the string's bytes within `head`.
    private let headMask: UInt64
    /// The last 8 bytes, for 9 to 16 bytes.
    private let tail: UInt64

    init(_ bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard (1...16).contains(bytes.count) else {
            (count, head, headMask, tail) = (0, 0, 0, 0)
            return
        }
        count = bytes.count
        head = Self.word(bytes.prefix(8))
        headMask = Self.word(repeatElement(0xFF, count: min(bytes.count, 8)))
        tail = bytes.count > 8 ? Self.word(bytes.suffix(8)) : 0
    }

    var isComparable: Bool { count > 0 }

    /// The bytes as one word loaded from memory, padded with zeros to 8.
    private static func word(_ bytes: some Collection<UInt8>) -> UInt64 {
        var padded = Array(bytes)
        padded.append(contentsOf: repeatElement(0, count: 8 - padded.count))
        return padded.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    /// Whether the `count` bytes at `start` are the string's. Reads `max(count, 8)` bytes from
    /// `start`, which the caller guarantees are readable; requires `isComparable`.
    @inline(__always)
    func matches(at start: UnsafeRawPointer) -> Bool {
        let first = start.loadUnaligned(as: UInt64.self)
        if count <= 8 { return first & headMask == head }
        return first == head && start.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == tail
    }
}
