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
            return try container(bytes, keyed: true) { key in key.flatMap { fields[$0] } }
        case .array(let element):
            return try container(bytes, keyed: false) { _ in element }
        }
    }

    /// A keyed container as a JSON object or an unkeyed one as an array, each value rendered
    /// with the shape `shape(key)` names (the key is nil in an unkeyed container).
    private static func container(_ bytes: UnsafeRawBufferPointer, keyed: Bool,
                                  shape: (String?) -> InstanceShape?) throws(BinaryFormatError) -> String {
        let kind: StaticString = keyed ? "keyed" : "unkeyed"
        let header = try BinaryContainerLayout.readHeader(bytes, minimumEntrySize: keyed ? BinaryContainerLayout.minimumKeyedEntrySize
                                                              : BinaryContainerLayout.minimumUnkeyedEntrySize, kind: kind)
        var offset = header.entriesStart
        var output = keyed ? "{" : "["
        for index in 0..<header.count {
            output += index == 0 ? "" : ","
            var key: String?
            let value: Range<Int>
            if keyed {
                let entry = try BinaryContainerLayout.keyedEntry(in: bytes, at: offset)
                guard let name = String(validating: bytes[entry.key], as: UTF8.self) else { throw BinaryFormatError("key is not UTF-8") }
                output += quoted(name) + ":"
                (key, value) = (name, entry.value)
            } else {
                value = try BinaryContainerLayout.element(in: bytes, at: offset)
            }
            render(UnsafeRawBufferPointer(rebasing: bytes[value]), shape: shape(key), into: &output)
            offset = value.upperBound
        }
        guard offset == bytes.count else { throw BinaryFormatError("\(kind) container does not fill its slot") }
        return output + (keyed ? "}" : "]")
    }

    private static func number(_ value: Double) -> String {
        value.isFinite ? "\(value)" : quoted("\(value)")
    }

    private static func quoted(_ text: String) -> String { jsonStringLiteral(text) }
}
