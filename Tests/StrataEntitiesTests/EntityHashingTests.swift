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
