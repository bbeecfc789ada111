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

/// A JSON string literal for `text`: quotes, backslashes and control characters escaped.
public func jsonStringLiteral(_ text: String) -> String {
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
