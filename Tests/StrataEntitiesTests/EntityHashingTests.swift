import Foundation
import Testing
@testable import StrataEntities

/// Values and references hash without building their encodings; equal ones must still hash
/// equally, or a bulk result keyed by reference would lose entries.
@Suite struct EntityHashingTests {
    @Test func equalValuesHashEqually() {
        let pairs: [(EntityValue, EntityValue)] = [
            (.string("\u{E9}t\u{E9}"), .string("e\u{301}te\u{301}")),   // NFC and NFD: one encoding
            (.int(7), .int(7)), (.bool(true), .bool(true)),
            (.double(-0.0), .double(0.0)), (.double(.nan), .double(-.nan)),
            (.uuid(UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2))), .uuid(UUID(uuid: (1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2)))),
            (.array([.string("e\u{301}"), .int(1)]), .array([.string("\u{E9}"), .int(1)])),
        ]
        for (lhs, rhs) in pairs {
            #expect(lhs == rhs, "\(lhs) \(rhs)")
            #expect(lhs.hashValue == rhs.hashValue, "\(lhs) \(rhs)")
        }
        #expect(Set<EntityValue>([.int(1), .double(1), .string("1"), .bool(true)]).count == 4)
    }

    /// `==` compares without encoding; it must say "equal" exactly when the encodings are equal
    /// (the index's equality), for every pair of a set mixing kinds and their edge cases.
    @Test func equalityIsEqualityOfEncodings() {
        let uuid = UUID(uuid: (9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3))
        let values: [EntityValue] = [
            .bool(false), .bool(true), .int(0), .int(1), .int(-1), .double(0.0), .double(-0.0), .double(1),
            .double(.nan), .double(-.nan), .double(.infinity), .date(Date(timeIntervalSinceReferenceDate: 0)),
            .date(Date(timeIntervalSinceReferenceDate: -0.0)), .date(Date(timeIntervalSinceReferenceDate: 1)),
            .string(""), .string("a"), .string("\u{E9}"), .string("e\u{301}"), .string("a\u{0}"),
            .data(Data()), .data(Data([0])), .data(Data([0, 0])), .uuid(uuid), .entity(EntityID(uuid)),
            .array([]), .array([.int(1)]), .array([.double(-0.0)]), .array([.double(0.0)]),
            .array([.string("e\u{301}")]), .array([.string("\u{E9}")]), .array([.int(1), .int(2)]), .array([.array([])]),
        ]
        for lhs in values {
            for rhs in values {
                #expect((lhs == rhs) == (lhs.orderedBytes == rhs.orderedBytes), "\(lhs) \(rhs)")
            }
        }
    }

    @Test func referencesDifferingOnlyInCreationDetailsStayDistinct() {
        let plain = EntityReference.named("Ada", ofType: "person")
        let creating = plain.createIfMissing(with: ["born": 1815])
        let other = plain.createIfMissing(with: ["born": 1900])
        #expect(plain.hashValue == EntityReference.named("A\u{64}a", ofType: "person").hashValue)
        // Same hash (match and type), still three keys: equality compares every field.
        let results: [EntityReference: Int] = [plain: 1, creating: 2, other: 3]
        #expect(results.count == 3 && results[creating] == 2 && results[other] == 3)
    }
}
