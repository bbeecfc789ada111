import Foundation

/// An arbitrary byte string usable as an ordered key, ordered lexicographically by unsigned
/// bytes (a strict prefix sorts first).
///
/// Why a wrapper instead of conforming `Data` or `[UInt8]` directly: neither is `Comparable`,
/// and adding a retroactive `Comparable` conformance to a Foundation or stdlib type would
/// change what compiles in every module that imports Strata (and would clash if the owner
/// ever adds its own). A wrapper keeps the ordering explicit at the call site.
///
/// Encoded with the same escaping as `String` (`0x00` → `0x00 0xFF`, end `0x00 0x00`).
public struct OrderedBytes: OrderedKey, Comparable, ExpressibleByArrayLiteral, CustomStringConvertible {
    public var bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(_ data: Data) { self.bytes = Array(data) }
    public init(arrayLiteral elements: UInt8...) { self.bytes = elements }

    public var data: Data { Data(bytes) }

    public var description: String {
        "OrderedBytes(" + bytes.map { String($0, radix: 16) }.joined(separator: " ") + ")"
    }

    public static func < (lhs: OrderedBytes, rhs: OrderedBytes) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }

    public func encodeOrderedKey(into writer: inout OrderedKeyWriter) {
        writer.writeEscaped(bytes)
    }

    public static func decodeOrderedKey(from reader: inout OrderedKeyReader) throws -> OrderedBytes {
        OrderedBytes(try reader.readEscaped(reading: "OrderedBytes"))
    }
}
