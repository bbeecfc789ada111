/// The growable byte buffer the binary encoder writes into.
///
/// Why not `[UInt8]`: every `Array.append` checks uniqueness and capacity through the
/// runtime, and `append(contentsOf:)` of a buffer pointer costs about a hundred instructions;
/// an instance encode makes dozens of such calls. Here an append is one capacity comparison
/// and a pointer write, and the finished bytes are copied into an array once.
///
/// This is the only type of the encoder that touches raw memory. Its surface is safe: every
/// write checks capacity first (growing as needed) and every positional read or write checks
/// its position against `count`, trapping like an array index would, so no caller can reach
/// memory outside the initialized bytes.
///
/// Invariants: `storage` points to `capacity` allocated bytes owned by this buffer (freed in
/// `deinit`); the first `count` are initialized; `0 <= count <= capacity` and `capacity > 0`.
/// The type is noncopyable, so the storage has exactly one owner.
struct BinaryOutputBuffer: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>
    private(set) var count: Int
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        self.storage = .allocate(capacity: self.capacity)
        self.count = 0
    }

    deinit {
        storage.deallocate()
    }

    // MARK: Appending

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toAtLeast: count + 1) }
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let byteCount = bytes.count
        guard byteCount > 0, let source = bytes.baseAddress else { return }
        if byteCount > capacity - count { grow(toAtLeast: count + byteCount) }
        UnsafeMutableRawPointer(storage + count).copyMemory(from: source, byteCount: byteCount)
        count += byteCount
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Appends the in-memory bytes of `value` in little-endian order (fixed-width fields).
    @inline(__always)
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        let width = MemoryLayout<T>.size
        if width > capacity - count { grow(toAtLeast: count + width) }
        UnsafeMutableRawPointer(storage + count).storeBytes(of: value.littleEndian, as: T.self)
        count += width
    }

    /// Appends a varint byte count followed by the UTF-8 of `string` (the form of keys and
    /// `String` values).
    @inline(__always)
    mutating func appendLengthPrefixedUTF8(_ string: String) {
        // Native Swift strings (all literals and most runtime strings) are contiguous UTF-8.
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { utf8 in
            BinaryVarint.append(UInt64(utf8.count), to: &self)
            append(UnsafeRawBufferPointer(utf8))
        }
        if done == nil { appendBridgedLengthPrefixedUTF8(string) }
    }

    /// Kept out of line: only strings without contiguous UTF-8 storage take it.
    @inline(never)
    private mutating func appendBridgedLengthPrefixedUTF8(_ string: String) {
        var copy = string
        copy.withUTF8 { utf8 in
            BinaryVarint.append(UInt64(utf8.count), to: &self)
            append(UnsafeRawBufferPointer(utf8))
        }
    }

    /// Forgets the written bytes, keeping the storage for reuse.
    mutating func removeAll() {
        count = 0
    }

    // MARK: Positional access (checked against `count`)

    /// A byte already written.
    subscript(position: Int) -> UInt8 {
        get {
            precondition(position >= 0 && position < count, "BinaryOutputBuffer index out of range")
            return storage[position]
        }
        set {
            precondition(position >= 0 && position < count, "BinaryOutputBuffer index out of range")
            storage[position] = newValue
        }
    }

    /// Replaces the single byte at `position` by `replacement`, shifting the bytes after it
    /// (widening a 1-byte placeholder into a multi-byte varint).
    mutating func replaceByte(at position: Int, with replacement: UnsafeRawBufferPointer) {
        precondition(position >= 0 && position < count, "BinaryOutputBuffer index out of range")
        let growth = replacement.count - 1
        guard growth >= 0, let source = replacement.baseAddress else { return }
        if growth > capacity - count { grow(toAtLeast: count + growth) }
        let tail = position + 1
        // Raw `copyMemory` is a memmove: the source and destination overlap.
        UnsafeMutableRawPointer(storage + tail + growth).copyMemory(from: storage + tail, byteCount: count - tail)
        UnsafeMutableRawPointer(storage + position).copyMemory(from: source, byteCount: replacement.count)
        count += growth
    }

    /// Overwrites already-written bytes starting at `start` (re-ordering a region in place).
    mutating func overwrite(at start: Int, with bytes: [UInt8]) {
        precondition(start >= 0 && bytes.count <= count - start, "BinaryOutputBuffer range out of bounds")
        bytes.withUnsafeBytes { source in
            guard let base = source.baseAddress else { return }
            UnsafeMutableRawPointer(storage + start).copyMemory(from: base, byteCount: source.count)
        }
    }

    /// Calls `body` with the bytes written so far; the pointer must not escape `body`.
    func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage, count: count))
    }

    /// The bytes written so far, as an array (one copy). Built from a buffer pointer, which this
    /// module compiles for `UInt8`: `Array(unsafeUninitializedCapacity:)` went through the
    /// standard library's unspecialized allocation, which looked the array storage type up at run
    /// time (about 370 instructions per call).
    func makeArray() -> [UInt8] {
        Array(UnsafeBufferPointer(start: storage, count: count))
    }

    /// Replaces the bytes of `array` with the written ones, in its storage when it is large enough.
    func copy(replacing array: inout [UInt8]) {
        array.removeAll(keepingCapacity: true)
        array.append(contentsOf: UnsafeBufferPointer(start: storage, count: count))
    }

    // MARK: Growth

    /// Reallocates to at least `minimumCapacity` (at least doubling, so appends stay
    /// amortized O(1)), keeping the written bytes.
    @inline(never)
    private mutating func grow(toAtLeast minimumCapacity: Int) {
        let newCapacity = max(minimumCapacity, capacity * 2)
        let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStorage.initialize(from: storage, count: count)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
    }
}
