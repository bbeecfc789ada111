import Glibc

/// Reads a file descriptor line by line in large chunks.
final class DumpLineReader {
    private let descriptor: Int32
    let path: String
    private var storage: UnsafeMutableRawPointer
    private var capacity = 1 << 20
    /// Unconsumed bytes are storage[start..<end].
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// Bytes consumed so far (for progress).
    private(set) var bytesRead: UInt64 = 0
    private(set) var lineNumber = 0
    /// The longest line accepted, in bytes without its terminator (see `maximumLineLength`).
    private let maximumLine: Int

    /// The longest line any dump entry needs: the base64 of the largest value
    /// (`PageLayout.maximumValueSize`; about 2.9 GB of base64) and room for its key (a quarter
    /// page at most) and the JSON around them. `dump` leaves out an annotation ("json") that
    /// would make a line longer. A longer line cannot be an entry, and without this limit
    /// an input with no newline made the buffer double until memory ran out.
    static let maximumLineLength = (PageLayout.maximumValueSize + 2) / 3 * 4 + (1 << 20)

    /// Reads `descriptor`; a line longer than `maximumLineLength` bytes is `DumpError.invalidLine`
    /// (a parameter for tests: the real limit is gigabytes).
    init(descriptor: Int32, path: String, maximumLineLength: Int = DumpLineReader.maximumLineLength) {
        self.descriptor = descriptor
        self.path = path
        self.maximumLine = maximumLineLength
        // Room for the longest line and its terminator (CRLF at most), never more.
        capacity = min(capacity, maximumLineLength + 2)
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// Calls `body` with the next line, without its terminator (and a trailing CR); nil at the end.
    func nextLine<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result? {
        while true {
            var lineEnd = -1
            if start < end, let hit = memchr(storage + start, 0x0A, end - start) {
                lineEnd = storage.distance(to: hit)
            } else if atEnd {
                guard start < end else { return nil }
                lineEnd = end
            }
            if lineEnd >= 0 {
                var stop = lineEnd
                if stop > start && storage.load(fromByteOffset: stop - 1, as: UInt8.self) == 0x0D { stop -= 1 }
                // The buffer holds one byte more than the longest line and an LF (room for a CR),
                // so a line one byte too long can arrive whole: refused here.
                guard stop - start <= maximumLine else { throw lineTooLong() }
                let line = UnsafeRawBufferPointer(start: storage + start, count: stop - start)
                start = min(end, lineEnd + 1)
                lineNumber += 1
                return try body(line)
            }
            try fill()
        }
    }

    private func lineTooLong() -> DumpError {
        DumpError.invalidLine(source: path, line: lineNumber + 1, reason: "a line longer than \(maximumLine) bytes, more than any entry needs (no newline?)")
    }

    private func fill() throws {
        if start > 0 {
            memmove(storage, storage + start, end - start)
            end -= start
            start = 0
        }
        if end == capacity {
            // The buffer holds one line and no newline. Invariant: capacity <= maximumLine + 2,
            // so a full buffer of maximumLine + 2 bytes holds a line too long for any entry even
            // if its last byte is the CR of a CRLF.
            guard capacity <= maximumLine + 1 else { throw lineTooLong() }
            let grown = min(capacity * 2, maximumLine + 2)
            let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            larger.copyMemory(from: storage, byteCount: end)
            storage.deallocate()
            storage = larger
            capacity = grown
        }
        while true {
            let count = Glibc.read(descriptor, storage + end, capacity - end)
            if count < 0 {
                if errno == EINTR { continue }
                throw StrataError.io(operation: "read", path: path, errno: errno)
            }
            if count == 0 { atEnd = true }
            end += count
            bytesRead += UInt64(count)
            return
        }
    }
}
