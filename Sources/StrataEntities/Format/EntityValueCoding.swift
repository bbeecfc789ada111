import Foundation
import Strata

/// The byte form of values, in tree keys and in stored entries: one kind tag, then the value in
/// Strata's order-preserving encoding. Byte order equals `EntityValue`'s order (kind first), and
/// every encoding is self-delimiting, so a value can be followed by more key components.
///
/// Arrays: each element is preceded by `elementMarker` and the array ends with `arrayEnd`; the
/// end sorts below any further element, so a shorter array that is a prefix sorts first.
enum EntityValueCoding {
    /// Tag of a removal (a tombstone entry); never part of an index key.
    static let tombstoneTag: UInt8 = 0x00
    static let boolTag: UInt8 = 0x01
    static let intTag: UInt8 = 0x02
    static let doubleTag: UInt8 = 0x03
    static let dateTag: UInt8 = 0x04
    static let stringTag: UInt8 = 0x05
    static let dataTag: UInt8 = 0x06
    static let uuidTag: UInt8 = 0x07
    static let entityTag: UInt8 = 0x08
    static let arrayTag: UInt8 = 0x09
    static let elementMarker: UInt8 = 0x01
    static let arrayEnd: UInt8 = 0x00

    /// The deepest nesting of arrays a value may have (`.array([.int(1)])` is 1 level). Decoding
    /// recurses once per level, and so do destroying, comparing, hashing and describing a value,
    /// so stored bytes nested deeper are refused while decoding, before a value is built, and
    /// writes and imports refuse deeper values before anything is written. Must stay well
    /// below 250: an export spends two JSON levels per array level, and Foundation's JSON
    /// writer and reader refuse more than 512.
    static let maximumDepth = 64

    static func encode(_ value: EntityValue, into writer: inout OrderedKeyWriter) {
        switch value {
        case .bool(let v): writer.writeByte(boolTag); writer.write(v)
        case .int(let v): writer.writeByte(intTag); writer.write(v)
        case .double(let v): writer.writeByte(doubleTag); writer.write(v)
        case .date(let v): writer.writeByte(dateTag); writer.write(v)
        case .string(let v): writer.writeByte(stringTag); writer.write(v)
        case .data(let v): writer.writeByte(dataTag); writer.writeEscaped(v)
        case .uuid(let v): writer.writeByte(uuidTag); writer.write(v)
        case .entity(let v): writer.writeByte(entityTag); writer.write(v.uuid)
        case .array(let elements):
            writer.writeByte(arrayTag)
            for element in elements {
                writer.writeByte(elementMarker)
                encode(element, into: &writer)
            }
            writer.writeByte(arrayEnd)
        }
    }

    /// Decodes a value whose tag is next; `depth`: the arrays it is an element of.
    static func decode(from reader: inout OrderedKeyReader, depth: Int = 0) throws -> EntityValue {
        let tag = try reader.readByte(reading: "value tag")
        return try decode(tag: tag, from: &reader, depth: depth)
    }

    /// Decodes a value tagged `tag`; `depth`: the arrays it is an element of.
    /// - Throws: `EntityError.corrupt` for an unknown tag or arrays nested deeper than
    ///   `maximumDepth` (refused before descending: each level is a stack frame).
    static func decode(tag: UInt8, from reader: inout OrderedKeyReader, depth: Int = 0) throws -> EntityValue {
        switch tag {
        case boolTag: return .bool(try reader.read(Bool.self))
        case intTag: return .int(try reader.read(Int.self))
        case doubleTag: return .double(try reader.read(Double.self))
        case dateTag: return .date(try reader.read(Date.self))
        case stringTag: return .string(try reader.read(String.self))
        case dataTag: return .data(Data(try reader.readEscaped(reading: "data value")))
        case uuidTag: return .uuid(try reader.read(UUID.self))
        case entityTag: return .entity(EntityID(try reader.read(UUID.self)))
        case arrayTag:
            guard depth < maximumDepth else { throw EntityError.corrupt(reason: "array values nested deeper than \(maximumDepth) levels") }
            var elements: [EntityValue] = []
            while try reader.readByte(reading: "array element marker") == elementMarker {
                elements.append(try decode(from: &reader, depth: depth + 1))
            }
            return .array(elements)
        default:
            throw EntityError.corrupt(reason: "unknown value tag \(tag)")
        }
    }
}

extension EntityValue {
    /// How many levels of arrays the value nests: 0 for a value that is not an array, 1 for
    /// `.array([.int(1)])`. (It recurses as deep as the value: one built in memory already
    /// costs that much to destroy.)
    var arrayDepth: Int {
        guard case .array(let elements) = self else { return 0 }
        var deepest = 0
        for element in elements where element.isArray { deepest = max(deepest, element.arrayDepth) }
        return 1 + deepest
    }

    private var isArray: Bool {
        if case .array = self { return true }
        return false
    }

    /// The tagged, order-preserving encoding (see `EntityValueCoding`).
    var orderedBytes: [UInt8] {
        var writer = OrderedKeyWriter(reservingCapacity: 16)
        EntityValueCoding.encode(self, into: &writer)
        return writer.bytes
    }
}
