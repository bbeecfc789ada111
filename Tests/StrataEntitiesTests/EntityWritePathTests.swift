import Foundation
import Strata
import StrataCore
import Testing
@testable import StrataEntities

/// The write paths that skip general machinery: an unlabelled entry's body written without the
/// string encoder, and references hashed by their matched value alone (equal ones hash equally,
/// and a bulk get-or-create of many names still resolves each to its own entity).
@Suite struct EntityWritePathTests {
    @Test func unlabelledBodiesAreTheGeneralEncoding() throws {
        let values: [EntityValue?] = [nil, .int(-3), .string(""), .string("a\u{0}b"), .double(.nan), .array([.bool(true)])]
        for value in values {
            for label in [nil, "", "email", "e\u{301}"] as [String?] {
                var fast = OrderedKeyWriter(reservingCapacity: 16)
                PropertyEntry(value, datestamp: .distantPast, type: label).encodeBody(into: &fast)
                var general = OrderedKeyWriter(reservingCapacity: 16)
                general.write(label ?? "")
                if let value { EntityValueCoding.encode(value, into: &general) } else { general.writeByte(EntityValueCoding.tombstoneTag) }
                #expect(fast.bytes == general.bytes, "\(String(describing: value)) \(String(describing: label))")
                let decoded = try fast.bytes.withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: .distantPast) }
                // An empty label reads back as none (both encode as "").
                #expect(decoded == PropertyEntry(value, datestamp: .distantPast, type: label?.isEmpty == true ? nil : label))
            }
        }
    }

    @Test func referencesHashByTheirMatchedValue() {
        let pairs: [(EntityReference, EntityReference)] = [
            (.named("\u{E9}", ofType: "p"), .named("e\u{301}", ofType: "p")),
            (.whereKey("k", equals: .double(-0.0)), .whereKey("k", equals: .double(0.0))),
            (.named("Ada", ofType: "p").createIfMissing(with: ["x": 1]), .named("Ada", ofType: "p")),
        ]
        for (lhs, rhs) in pairs {
            #expect(lhs.hashValue == rhs.hashValue, "\(lhs) \(rhs)")
            #expect(lhs.identity == rhs.identity && lhs.identity.hashValue == rhs.identity.hashValue, "\(lhs) \(rhs)")
        }
        // Same value, other key or type: one hash, distinct keys.
        let distinct: [EntityReference] = [.named("Ada", ofType: "p"), .named("Ada", ofType: "q"), .named("Ada"), .whereKey("alias", equals: "Ada")]
        #expect(Set(distinct).count == 4 && Set(distinct.map(\.identity)).count == 4)
    }

    @Test func bulkGetOrCreateResolvesEachNameOnce() throws {
        let store = try EntityStore.inMemory()
        let names = (0..<300).map { "n\($0 % 200)" } // 100 named twice
        let ids = try store.writeNow { tx in
            let references = names.map { EntityReference.named($0, ofType: "item").createIfMissing() }
            let ids = try tx.resolve(references)
            #expect(tx.createdEntities.count == 200)
            return ids
        }
        #expect(Set(ids.values).count == 200)
        try store.writeNow { tx in
            // Same names again (some of another type): found, or created for the other type.
            let references = names.prefix(150).map { EntityReference.named($0, ofType: "item").createIfMissing() }
                + names.prefix(10).map { EntityReference.named($0, ofType: "other").createIfMissing() }
            let again = try tx.resolve(references)
            for name in names.prefix(150) { #expect(again[.named(name, ofType: "item")] == ids[.named(name, ofType: "item")]) }
            #expect(tx.createdEntities.count == 10)
        }
    }
}
