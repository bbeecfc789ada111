import Foundation
import Testing
@testable import StrataCore

/// `Transaction.get(_:in:)` and `forEachValue(of:in:_:)` for many keys answer exactly like one
/// `get` per key, across batch boundaries, for missing keys and for an empty tree.
@Suite struct BatchedLookupTests {
    @Test func matchesSingleGets() throws {
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        let probes = (0..<200).map { String(format: "k%05d", ($0 * 37) % 3100) } + ["", "a", "zzz"]
        try db.write { tx throws in
            let t = try tx.createTree("t")
            for i in stride(from: 0, to: 3000, by: 2) { try tx.put(String(format: "k%05d", i), "v\(i)", in: t) }
            _ = try tx.createTree("empty")
            // The probe keys live in a tree of their own: scanning it yields them as views.
            let p = try tx.createTree("probes")
            for probe in probes { try tx.put(probe, "", in: p) }
        }
        try db.read { tx throws in
            var views: [ByteView] = []
            try tx.scan(try tx.tree("probes")) { key, _ in
                views.append(key)
                return true
            }
            #expect(views.count == Set(probes).count)
            let t = try tx.tree("t")
            let batched = try tx.get(views, in: t)
            #expect(batched.count == views.count)
            // The same lookups handed out one by one, in order.
            var handedOut: [[UInt8]?] = []
            try tx.forEachValue(of: views, in: t) { position, value in
                #expect(position == handedOut.count)
                handedOut.append(value?.bytes)
            }
            #expect(handedOut == batched.map { $0?.bytes })
            var hits = 0
            for (key, found) in zip(views, batched) {
                let single = try tx.get(key, in: t)
                #expect(found?.bytes == single?.bytes, "\(key)")
                if found != nil { hits += 1 }
            }
            #expect(hits > 50 && hits < views.count)
            #expect(try tx.get(views, in: tx.tree("empty")).allSatisfy { $0 == nil })
            #expect(try tx.get([], in: t).isEmpty)
        }
    }
}
