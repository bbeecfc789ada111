import Glibc
import StrataCore

/// The dump format (see README.md): JSON lines, keys and values in standard base64.
enum Interchange {
    static let version = 1

    static func headerLine(pageSize: Int, generation: UInt64) -> String {
        "{\"strata_dump\":\(version),\"page_size\":\(pageSize),\"generation\":\(generation)}"
    }

    static func treeLine(_ name: String) -> String {
        "{\"tree\":\(jsonString(name))}"
    }
}

/// A JSON string literal for `text`: quotes, backslashes and control characters escaped.
func jsonString(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": result += "\\\""
        case "\\": result += "\\\\"
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            let hex = String(scalar.value, radix: 16)
            result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: result.unicodeScalars.append(scalar)
        }
    }
    return result + "\""
}

// MARK: Base64

enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, character) in alphabet.enumerated() { table[Int(character)] = UInt8(index) }
        return table
    }()

    /// Appends the padded base64 text of `bytes` to `output`.
    static func encode(_ bytes: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        var index = 0
        let count = bytes.count
        output.reserveCapacity(output.count + (count + 2) / 3 * 4)
        while index + 3 <= count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(alphabet[Int(value >> 6 & 63)])
            output.append(alphabet[Int(value & 63)])
            index += 3
        }
        let rest = count - index
        if rest > 0 {
            let value = UInt32(bytes[index]) << 16 | (rest == 2 ? UInt32(bytes[index + 1]) << 8 : 0)
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(rest == 2 ? alphabet[Int(value >> 6 & 63)] : UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        }
    }

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        bytes.withUnsafeBytes { encode($0, into: &output) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes padded (or unpadded) standard base64; nil if `text` is not base64.
    static func decode(_ text: UnsafeRawBufferPointer) -> [UInt8]? {
        var end = text.count
        while end > 0 && text[end - 1] == UInt8(ascii: "=") { end -= 1 }
        guard text.count - end <= 2 else { return nil }
        let length = end
        guard length % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(length * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        let table = decodeTable
        for index in 0..<end {
            let value = table[Int(text[index])]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return output
    }
}

// MARK: Output

/// Buffered output to a file descriptor (stdout or a file), in large writes.
final class ByteSink {
    private let descriptor: Int32
    private let path: String
    private let ownsDescriptor: Bool
    private var buffer: [UInt8] = []
    private let capacity = 1 << 20

    /// Standard output.
    init() {
        descriptor = 1
        path = "stdout"
        ownsDescriptor = false
        buffer.reserveCapacity(capacity + 4096)
    }

    /// A new file at `path`; fails if anything exists there.
    init(creating path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw errno == EEXIST ? ToolError.failure("\(path) already exists; choose a new file (nothing is overwritten)")
                                  : StrataError.io(operation: "create", path: path, errno: errno)
        }
        self.path = path
        ownsDescriptor = true
        buffer.reserveCapacity(capacity + 4096)
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    func append(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    func appendBase64(_ bytes: UnsafeRawBufferPointer) {
        Base64.encode(bytes, into: &buffer)
    }

    func flushIfFull() throws {
        if buffer.count >= capacity { try flush() }
    }

    func flush() throws {
        try buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw errno == ENOSPC ? StrataError.diskFull(path: path) : StrataError.io(operation: "write", path: path, errno: errno)
                }
                offset += written
            }
        }
        buffer.removeAll(keepingCapacity: true)
    }
}

// MARK: Input

/// Reads a file descriptor line by line in large chunks.
final class LineReader {
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

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
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
                let line = UnsafeRawBufferPointer(start: storage + start, count: stop - start)
                start = min(end, lineEnd + 1)
                lineNumber += 1
                return try body(line)
            }
            try fill()
        }
    }

    private func fill() throws {
        if start > 0 {
            memmove(storage, storage + start, end - start)
            end -= start
            start = 0
        }
        if end == capacity {
            // One line longer than the buffer: grow it.
            let larger = UnsafeMutableRawPointer.allocate(byteCount: capacity * 2, alignment: 16)
            larger.copyMemory(from: storage, byteCount: end)
            storage.deallocate()
            storage = larger
            capacity *= 2
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

/// A JSON value of one dump line. Only what the format uses is kept; nested values are skipped.
enum LineValue: Equatable {
    case string([UInt8])
    case number(String)
    case literal(String)
    case nested
}

/// Parses one line holding a flat JSON object into its fields, in order.
struct LineParser {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    enum Failure: Error { case invalid(String) }

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    static func parse(_ line: UnsafeRawBufferPointer) throws -> [(String, LineValue)] {
        var parser = LineParser(line)
        return try parser.object()
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A { index += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws {
        skipSpace()
        guard current == byte else { throw Failure.invalid("expected \(what)") }
        index += 1
    }

    private mutating func object() throws -> [(String, LineValue)] {
        try expect(UInt8(ascii: "{"), "a JSON object")
        var fields: [(String, LineValue)] = []
        skipSpace()
        if current == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                skipSpace()
                guard current == UInt8(ascii: "\"") else { throw Failure.invalid("expected a field name") }
                let name = String(decoding: try string(), as: UTF8.self)
                try expect(UInt8(ascii: ":"), "':' after \"\(name)\"")
                skipSpace()
                fields.append((name, try value()))
                skipSpace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                break
            }
        }
        skipSpace()
        guard current == nil else { throw Failure.invalid("unexpected text after the object") }
        return fields
    }

    private mutating func value() throws -> LineValue {
        guard let byte = current else { throw Failure.invalid("missing value") }
        switch byte {
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try skipNested()
            return .nested
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let start = index
            while let c = current, c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".") || c == UInt8(ascii: "e")
                    || c == UInt8(ascii: "E") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { index += 1 }
            return .number(String(decoding: bytes[start..<index], as: UTF8.self))
        default:
            for word in ["true", "false", "null"] where bytes[index...].starts(with: word.utf8) {
                index += word.utf8.count
                return .literal(word)
            }
            throw Failure.invalid("unexpected character '\(String(decoding: [byte], as: UTF8.self))'")
        }
    }

    /// A string literal starting at the opening quote; returns its UTF-8 bytes, escapes resolved.
    private mutating func string() throws -> [UInt8] {
        index += 1
        let start = index
        // Fast path: base64 and plain names have no escapes.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\") { index += 1 }
        guard let stop = current else { throw Failure.invalid("unterminated string") }
        if stop == UInt8(ascii: "\"") {
            index += 1
            return Array(bytes[start..<(index - 1)])
        }
        var result = Array(bytes[start..<index])
        while true {
            guard let byte = current else { throw Failure.invalid("unterminated string") }
            index += 1
            if byte == UInt8(ascii: "\"") { return result }
            guard byte == UInt8(ascii: "\\") else {
                result.append(byte)
                continue
            }
            guard let escape = current else { throw Failure.invalid("unterminated string") }
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(escape)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar) {
                    guard current == UInt8(ascii: "\\") else { throw Failure.invalid("lone surrogate in \\u escape") }
                    index += 1
                    guard current == UInt8(ascii: "u") else { throw Failure.invalid("lone surrogate in \\u escape") }
                    index += 1
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw Failure.invalid("bad surrogate pair") }
                    scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw Failure.invalid("bad \\u escape") }
                result.append(contentsOf: String(Character(unicode)).utf8)
            default:
                throw Failure.invalid("bad escape \\\(String(decoding: [escape], as: UTF8.self))")
            }
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16) else {
            throw Failure.invalid("bad \\u escape")
        }
        index += 4
        return value
    }

    private mutating func skipNested() throws {
        var depth = 0
        repeat {
            guard let byte = current else { throw Failure.invalid("unterminated nested value") }
            switch byte {
            case UInt8(ascii: "\""):
                _ = try string()
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
            index += 1
        } while depth > 0
    }
}
