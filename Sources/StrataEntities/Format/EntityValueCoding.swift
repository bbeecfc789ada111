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

    static func decode(from reader: inout OrderedKeyReader) throws -> EntityValue {
        let tag = try reader.readByte(reading: "value tag")
        return try decode(tag: tag, from: &reader)
    }

    static func decode(tag: UInt8, from reader: inout OrderedKeyReader) throws -> EntityValue {
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
            var elements: [EntityValue] = []
            while try reader.readByte(reading: "array element marker") == elementMarker {
                elements.append(try decode(from: &reader))
            }
            return .array(elements)
        default:
            throw EntityError.corrupt(reason: "unknown value tag \(tag)")
        }
    }
}

extension EntityValue {
    /// The tagged, order-preserving encoding (see `EntityValueCoding`).
    var orderedBytes: [UInt8] {
        var writer = OrderedKeyWriter(reservingCapacity: 16)
        EntityValueCoding.encode(self, into: &writer)
        return writer.bytes
    }
}
