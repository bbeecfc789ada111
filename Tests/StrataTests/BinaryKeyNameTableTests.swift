import Foundation
@testable import Strata
import Testing

// Field look-ups find a key's name by the key's bits once learned (`BinaryKeyNameTable`). These
// tests pin that learned names never mix up keys: keys asked in any order, more keys than the
// table holds, key types that do not qualify (not enums, not plain bits), and two key types of
// one shape.

/// A synthesized-`CodingKeys`-like enum of 40 cases (1 byte of plain bits; names "slot0"...).
private enum SlotKey: CodingKey, CaseIterable {
    case slot0, slot1, slot2, slot3, slot4, slot5, slot6, slot7, slot8, slot9, slot10, slot11, slot12, slot13, slot14, slot15, slot16, slot17, slot18, slot19, slot20, slot21, slot22, slot23, slot24, slot25, slot26, slot27, slot28, slot29, slot30, slot31, slot32, slot33, slot34, slot35, slot36, slot37, slot38, slot39
    init(_ slot: UInt16) { self = SlotKey.allCases[Int(slot)] }
}

/// Same layout as `SlotKey`, other names: a table is per key type.
private enum OtherSlotKey: CodingKey, CaseIterable {
    case other0, other1, other2, other3, other4, other5, other6, other7, other8, other9, other10, other11, other12, other13, other14, other15, other16, other17, other18, other19, other20, other21, other22, other23, other24, other25, other26, other27, other28, other29, other30, other31, other32, other33, other34, other35, other36, other37, other38, other39
}

/// `slotCount` integer fields written in slot order and read in the order `readOrder` gives
/// (more slots than `BinaryKeyNameTable.capacity`, so some names are never learned).
private struct Slots: Codable, Equatable {
    static let slotCount: UInt16 = 40
    nonisolated(unsafe) static var readOrder: [UInt16] = Array(0..<slotCount)
    var values: [UInt16: Int]

    init(values: [UInt16: Int]) { self.values = values }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: SlotKey.self)
        values = [:]
        for slot in Self.readOrder {
            values[slot] = try container.decodeIfPresent(Int.self, forKey: SlotKey(slot))
        }
        // Names of another key type with the same bits are not confused with these.
        if let other = try? decoder.container(keyedBy: OtherSlotKey.self) {
            #expect(try other.decodeIfPresent(Int.self, forKey: OtherSlotKey.other0) == nil)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: SlotKey.self)
        for slot in values.keys.sorted() { try container.encode(values[slot], forKey: SlotKey(slot)) }
    }
}

/// A key type holding a `String` (not plain bits): always asked for its `stringValue`.
private struct NamedKey: CodingKey {
    var stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    var intValue: Int? { nil }
}

@Suite("Binary coder key names")
struct BinaryKeyNameTableTests {
    @Test func learnedNamesNeverMixUpKeys() throws {
        var generator = makeCodingTestGenerator("key names")
        let encoder = BinaryInstanceEncoder(), decoder = BinaryInstanceDecoder()
        for round in 0..<30 {
            // Some slots absent, values distinct per slot and round.
            var values: [UInt16: Int] = [:]
            for slot in 0..<Slots.slotCount where Bool.random(using: &generator) || slot % 7 == 0 {
                values[slot] = round * 1000 + Int(slot)
            }
            Slots.readOrder = Array(0..<Slots.slotCount).shuffled(using: &generator)
            let bytes = try encoder.encode(Slots(values: values))
            #expect(try decoder.decode(Slots.self, from: bytes) == Slots(values: values))
        }
    }

    /// A struct key whose name is looked up from a table that changes (a schema reloaded): its
    /// bits do not identify its name, so it must be asked for its name every time, never served
    /// a name remembered from an earlier decode on this thread.
    @Test func structKeysAreAskedForTheirNamesEveryTime() throws {
        final class Names: @unchecked Sendable { var current = ["alpha", "beta"] }
        let names = Names()
        struct IndexKey: CodingKey {
            nonisolated(unsafe) static var names: Names?
            let index: UInt8
            init(_ index: UInt8) { self.index = index }
            init?(stringValue: String) { nil }
            init?(intValue: Int) { nil }
            var stringValue: String { IndexKey.names!.current[Int(index)] }
            var intValue: Int? { nil }
        }
        struct Reader: Decodable {
            let first: Int?
            init(from decoder: any Decoder) throws {
                first = try decoder.container(keyedBy: IndexKey.self).decodeIfPresent(Int.self, forKey: IndexKey(0))
            }
        }
        IndexKey.names = names
        let bytes = try BinaryInstanceEncoder().encode(["alpha": 1, "beta": 2])
        let decoder = BinaryInstanceDecoder()
        #expect(try decoder.decode(Reader.self, from: bytes).first == 1)
        names.current = ["beta", "alpha"]
        #expect(try decoder.decode(Reader.self, from: bytes).first == 2, "a remembered name read the wrong field")
    }

    @Test func keysThatAreNotPlainBitsUseTheirNames() throws {
        let bytes = try BinaryInstanceEncoder().encode(["alpha": 1, "beta": 2, "gamma": 3])
        struct Reader: Decodable {
            var found: [String: Int] = [:]
            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: NamedKey.self)
                for name in ["gamma", "alpha", "delta", "beta", "alpha"] {
                    if let value = try container.decodeIfPresent(Int.self, forKey: NamedKey(name)) { found[name] = value }
                }
            }
        }
        #expect(try BinaryInstanceDecoder().decode(Reader.self, from: bytes).found == ["alpha": 1, "beta": 2, "gamma": 3])
    }
}

/// Keys and values on both sides of the one-byte length limit (127/128 bytes), which the
/// scanner's inlined path takes or leaves to the general one: a string of n ASCII bytes is a
/// value of n + 1 bytes (its length prefix), so `value127` holds 127 bytes and `value128` 128.
private struct LengthEdges: Codable, Equatable {
    var short: String
    var value127: String
    var value128: String
    var aKeyNameThatIsLongerThanOneHundredAndTwentySevenBytesSoItsLengthNeedsATwoByteVarintInTheStoredRecordXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX: Int
    var after: Int
}

extension BinaryKeyNameTableTests {
    @Test func lengthsAroundTheOneByteLimitAndTruncations() throws {
        let value = LengthEdges(short: "s", value127: String(repeating: "a", count: 126), value128: String(repeating: "b", count: 127),
                                aKeyNameThatIsLongerThanOneHundredAndTwentySevenBytesSoItsLengthNeedsATwoByteVarintInTheStoredRecordXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX: 42,
                                after: 7)
        let bytes = try BinaryInstanceEncoder().encode(value)
        let decoder = BinaryInstanceDecoder()
        #expect(try decoder.decode(LengthEdges.self, from: bytes) == value)
        // Every truncation is a typed error, and the next whole decode is exact.
        for cut in 0..<bytes.count {
            #expect(throws: DecodingError.self) { _ = try decoder.decode(LengthEdges.self, from: Array(bytes.prefix(cut))) }
        }
        #expect(try decoder.decode(LengthEdges.self, from: bytes) == value)
    }
}
