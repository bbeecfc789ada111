import Foundation
import StrataCore

/// Shows a binary-coded value as JSON text without its Swift type, guided by an `InstanceShape`
/// (see `BinaryInstanceEncoder` for the format). A value the shape does not describe, or whose
/// bytes do not fit the kind the shape names, is shown as `{"$base64":"…"}`: never a guess.
/// Dates are ISO 8601 strings, UUIDs their usual text, `Data` base64 strings.
enum BinaryJSONRenderer {
    static func render(_ bytes: UnsafeRawBufferPointer, shape: InstanceShape?) -> String {
        var output = ""
        render(bytes, shape: shape, into: &output)
        return output
    }

    private static func render(_ bytes: UnsafeRawBufferPointer, shape: InstanceShape?, into output: inout String) {
        if bytes.isEmpty {
            output += "null"
            return
        }
        guard let shape, let text = try? text(of: bytes, shape: shape) else {
            output += "{\"$base64\":\"" + Data(bytes).base64EncodedString() + "\"}"
            return
        }
        output += text
    }

    private static func text(of bytes: UnsafeRawBufferPointer, shape: InstanceShape) throws(BinaryFormatError) -> String {
        switch shape {
        case .bool: return try Bool.readBinary(from: bytes) ? "true" : "false"
        case .string: return quoted(try String.readBinary(from: bytes))
        case .signed: return String(try Int64.readBinary(from: bytes))
        case .unsigned: return String(try UInt64.readBinary(from: bytes))
        case .double: return number(try Double.readBinary(from: bytes))
        case .float: return number(Double(try Float.readBinary(from: bytes)))
        case .date:
            let seconds = Double(bitPattern: try BinaryFixedWidth.readLittleEndian(UInt64.self, from: bytes, what: "Date"))
            return quoted(ISO8601DateFormatter.string(from: Date(timeIntervalSinceReferenceDate: seconds), timeZone: .gmt,
                                                      formatOptions: [.withInternetDateTime, .withFractionalSeconds]))
        case .uuid:
            guard bytes.count == 16 else { throw BinaryFormatError("UUID must be 16 bytes") }
            let uuid = UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
            return quoted(uuid.uuidString)
        case .data:
            var offset = 0
            let length = try BinaryVarint.readLength(from: bytes, at: &offset, of: "Data")
            guard offset + length == bytes.count else { throw BinaryFormatError("Data does not fill its slot") }
            return quoted(Data(bytes[offset...]).base64EncodedString())
        case .object(let fields):
            var offset = 0
            let count = try BinaryVarint.read(from: bytes, at: &offset)
            guard count <= UInt64(bytes.count) else { throw BinaryFormatError("keyed container count") }
            var output = "{"
            for index in 0..<Int(count) {
                let keyLength = try BinaryVarint.readLength(from: bytes, at: &offset, of: "key")
                guard let key = String(validating: bytes[offset..<offset + keyLength], as: UTF8.self) else {
                    throw BinaryFormatError("key is not UTF-8")
                }
                offset += keyLength
                let valueLength = try BinaryVarint.readLength(from: bytes, at: &offset, of: "value")
                output += (index == 0 ? "" : ",") + quoted(key) + ":"
                render(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + valueLength]), shape: fields[key], into: &output)
                offset += valueLength
            }
            guard offset == bytes.count else { throw BinaryFormatError("keyed container does not fill its slot") }
            return output + "}"
        case .array(let element):
            var offset = 0
            let count = try BinaryVarint.read(from: bytes, at: &offset)
            guard count <= UInt64(bytes.count) else { throw BinaryFormatError("unkeyed container count") }
            var output = "["
            for index in 0..<Int(count) {
                let valueLength = try BinaryVarint.readLength(from: bytes, at: &offset, of: "element")
                output += index == 0 ? "" : ","
                render(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + valueLength]), shape: element, into: &output)
                offset += valueLength
            }
            guard offset == bytes.count else { throw BinaryFormatError("unkeyed container does not fill its slot") }
            return output + "]"
        }
    }

    private static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : quoted("\(value)")
    }

    private static func quoted(_ text: String) -> String { jsonStringLiteral(text) }
}
