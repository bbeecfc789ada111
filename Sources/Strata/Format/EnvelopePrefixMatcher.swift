/// Tells whether a stored envelope starts with one fixed prefix (`InstanceEnvelope.currentPrefix`:
/// a coding tag and the current version, usually 2 to 10 bytes) with one or two word loads.
///
/// Why: every typed load checks this prefix first, and the byte loop over an array it replaces
/// (a bounds check and a compare per byte, through the array's buffer) cost about a hundred
/// instructions per instance, more than reading a small record's field.
///
/// Exactness: a prefix of at most 8 bytes is compared as one word masked to its length; one of 9
/// to 16 bytes as its first and last 8 bytes (overlapping loads of the same bytes: equal words
/// mean equal bytes). Loads stay within the envelope; an envelope shorter than 8 bytes, or a
/// longer prefix, is compared byte by byte.
struct EnvelopePrefixMatcher {
    let prefix: [UInt8]
    /// The prefix's first 8 bytes as loaded from memory (zero beyond its count).
    private let head: UInt64
    /// Ones over the prefix's bytes within `head`.
    private let headMask: UInt64
    /// The prefix's last 8 bytes, for a prefix of 9 to 16 bytes.
    private let tail: UInt64

    init(_ prefix: [UInt8]) {
        self.prefix = prefix
        let count = prefix.count
        head = Self.word(prefix.prefix(8))
        headMask = Self.word(Array(repeating: 0xFF, count: min(count, 8)))
        tail = count > 8 ? Self.word(prefix.suffix(8)) : 0
    }

    /// The bytes as one word loaded from memory, padded with zeros to 8.
    private static func word(_ bytes: some Collection<UInt8>) -> UInt64 {
        var padded = Array(bytes)
        padded.append(contentsOf: repeatElement(0, count: 8 - padded.count))
        return padded.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }

    /// What follows the prefix in `envelope`, or nil if `envelope` does not start with it.
    @inline(__always)
    func payload(of envelope: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let count = prefix.count
        guard let base = envelope.baseAddress, envelope.count >= count else { return nil }
        let matches: Bool
        if envelope.count >= 8, count <= 16 {
            let first = base.loadUnaligned(as: UInt64.self)
            if count <= 8 {
                matches = first & headMask == head
            } else {
                matches = first == head && base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self) == tail
            }
        } else {
            matches = bytewise(envelope)
        }
        return matches ? UnsafeRawBufferPointer(start: base + count, count: envelope.count - count) : nil
    }

    @inline(never)
    private func bytewise(_ envelope: UnsafeRawBufferPointer) -> Bool {
        prefix.withUnsafeBytes { prefix in prefix.elementsEqual(envelope.prefix(prefix.count)) }
    }
}
