/// Tells whether a stored envelope starts with one fixed prefix (`InstanceEnvelope.currentPrefix`:
/// a coding tag and the current version, usually 2 to 10 bytes) with one or two word loads
/// (`BinaryShortPrefix`).
///
/// Why: every typed load checks this prefix first, and the byte loop over an array it replaces
/// (a bounds check and a compare per byte, through the array's buffer) cost about a hundred
/// instructions per instance, more than reading a small record's field.
///
/// Loads stay within the envelope; an envelope shorter than 8 bytes, or a prefix longer than 16,
/// is compared byte by byte.
struct EnvelopePrefixMatcher {
    let prefix: [UInt8]
    private let words: BinaryShortPrefix

    init(_ prefix: [UInt8]) {
        self.prefix = prefix
        words = BinaryShortPrefix(prefix)
    }

    /// What follows the prefix in `envelope`, or nil if `envelope` does not start with it.
    @inline(__always)
    func payload(of envelope: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let count = prefix.count
        guard let base = envelope.baseAddress, envelope.count >= count else { return nil }
        let matches = envelope.count >= 8 && words.isComparable ? words.matches(at: base) : bytewise(envelope)
        return matches ? UnsafeRawBufferPointer(start: base + count, count: envelope.count - count) : nil
    }

    @inline(never)
    private func bytewise(_ envelope: UnsafeRawBufferPointer) -> Bool {
        prefix.withUnsafeBytes { prefix in prefix.elementsEqual(envelope.prefix(prefix.count)) }
    }
}
