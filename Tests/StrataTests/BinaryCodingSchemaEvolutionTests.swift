import Foundation
import Strata
import Testing

private struct UserV1: Codable, Equatable {
    var id: UUID
    var name: String
}

private struct UserV2: Codable, Equatable {
    var id: UUID
    var name: String
    var email: String?
    var loginCount: Int?
    var tags: [String]?
}

/// Same fields as V2, declared (and therefore encoded and requested) in another order.
private struct UserV2Reordered: Codable, Equatable {
    var tags: [String]?
    var loginCount: Int?
    var name: String
    var email: String?
    var id: UUID
}

private struct UserRequiringEmail: Codable {
    var id: UUID
    var email: String
}

private struct NamedKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Carries its own lookup order: decodes `order`, then looks every listed key up in
/// `values` (a `[String: Int]`), including keys that are absent there.
private struct KeyProbe: Codable {
    var order: [String]
    var values: [String: Int]

    private enum CodingKeys: String, CodingKey { case order, values }

    init(order: [String], values: [String: Int]) {
        self.order = order
        self.values = values
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        order = try container.decode([String].self, forKey: .order)
        let nested = try container.nestedContainer(keyedBy: NamedKey.self, forKey: .values)
        values = [:]
        for name in order {
            values[name] = try nested.decodeIfPresent(Int.self, forKey: NamedKey(stringValue: name))
        }
    }
}

@Suite("Binary coder schema evolution")
struct BinaryCodingSchemaEvolutionTests {
    private let encoder = BinaryInstanceEncoder()
    private let decoder = BinaryInstanceDecoder()

    @Test func newOptionalFieldsReadAsNil() throws {
        let old = UserV1(id: UUID(), name: "Ada")
        let upgraded = try decoder.decode(UserV2.self, from: encoder.encode(old))
        #expect(upgraded == UserV2(id: old.id, name: "Ada", email: nil, loginCount: nil, tags: nil))
    }

    @Test func unknownFieldsAreSkipped() throws {
        let new = UserV2(id: UUID(), name: "Grace", email: "g@example.org", loginCount: 3, tags: ["x"])
        let downgraded = try decoder.decode(UserV1.self, from: encoder.encode(new))
        #expect(downgraded == UserV1(id: new.id, name: "Grace"))
    }

    @Test func fieldOrderDoesNotMatter() throws {
        let new = UserV2(id: UUID(), name: "Linus", email: nil, loginCount: 9, tags: [])
        let reordered = try decoder.decode(UserV2Reordered.self, from: encoder.encode(new))
        #expect(reordered == UserV2Reordered(tags: [], loginCount: 9, name: "Linus", email: nil, id: new.id))
        let back = try decoder.decode(UserV2.self, from: encoder.encode(reordered))
        #expect(back == new)
    }

    /// Keys of every length class and near-misses (same length, one byte different at the
    /// start, middle or end) must match exactly, whatever order they are requested in.
    @Test func keyLookupMatchesExactly() throws {
        var generator = makeCodingTestGenerator("key lookup")
        var stored: [String: Int] = [:]
        var absent: [String] = ["", "zz"]
        for length in 1...20 {
            let base = String((0..<length).map { Character(UnicodeScalar(UInt8(97 + $0 % 26))) })
            stored[base] = length
            for position in Set([0, length / 2, length - 1]) {
                var bytes = Array(base.utf8)
                bytes[position] = UInt8(ascii: "Z")
                absent.append(String(decoding: bytes, as: UTF8.self))
            }
            absent.append(base + "x")
        }
        stored["é"] = 99
        for _ in 0..<5 {
            let order = (Array(stored.keys) + absent.filter { stored[$0] == nil }).shuffled(using: &generator)
            let probe = try decoder.decode(KeyProbe.self, from: encoder.encode(KeyProbe(order: order, values: stored)))
            #expect(probe.values == stored)
        }
    }

    @Test func missingRequiredFieldIsKeyNotFound() throws {
        let bytes = try encoder.encode(UserV1(id: UUID(), name: "Ada"))
        do {
            _ = try decoder.decode(UserRequiringEmail.self, from: bytes)
            Issue.record("expected keyNotFound")
        } catch DecodingError.keyNotFound(let key, _) {
            #expect(key.stringValue == "email")
        }
    }

    @Test func errorsCarryTheCodingPath() throws {
        struct Outer: Codable { var items: [UserV1] }
        struct OuterStrict: Codable { var items: [UserRequiringEmail] }
        let bytes = try encoder.encode(Outer(items: [UserV1(id: UUID(), name: "a")]))
        do {
            _ = try decoder.decode(OuterStrict.self, from: bytes)
            Issue.record("expected keyNotFound")
        } catch DecodingError.keyNotFound(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["items", "Index 0"])
        }
    }

    @Test func typeChangesAreReportedNotMisread() throws {
        struct AsString: Codable { var value: String }
        struct AsDouble: Codable { var value: Double }
        let bytes = try encoder.encode(AsString(value: "not a number"))
        #expect(throws: DecodingError.self) { _ = try decoder.decode(AsDouble.self, from: bytes) }
    }
}
