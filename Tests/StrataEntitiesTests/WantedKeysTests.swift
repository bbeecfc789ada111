import Foundation
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// `WantedKeys.visit`: the walk over a header's current entries that decodes only the asked-for
/// keys, on damaged sections too.
@Suite struct WantedKeysTests {
    /// One current entry whose value lives in the history: key, 16 bytes of stamp, the mark.
    private func historyEntry(_ key: String) -> [UInt8] {
        EntityLayout.encodedName(key) + [UInt8](repeating: 0, count: 16) + [RecordHeader.historyMark]
    }

    /// A damaged section repeats a wanted key beyond the 64th many times before another wanted
    /// key: each key counts once, so the walk still reaches the other one (it stopped early when
    /// every repeat counted as a new key).
    @Test func repeatedKeysBeyondTheSixtyFourthCountOnce() throws {
        let wanted = WantedKeys((0..<72).map { "k\($0)" })
        var entries: [UInt8] = []
        for _ in 0..<72 { entries += historyEntry("k70") }
        entries += historyEntry("k71")
        var seen: [Int] = []
        try entries.withUnsafeBytes { section in
            try wanted.visit(in: section) { key, _, body in
                #expect(body == nil)
                seen.append(key)
            }
        }
        #expect(seen == [70, 71])
    }

    /// A section cut at every length, with inline and history entries: the walk and the one-key
    /// lookup either finish or throw `EntityError`, and never read past the cut (the cut section
    /// ends at a `PROT_NONE` page: the walk's 8-byte loads would fault past it).
    @Test func sectionsCutAtEveryLengthGetTypedErrorsOrFinish() throws {
        let guarded = GuardedPageEnd()
        var entries = historyEntry("alpha")
        entries += EntityLayout.encodedName("beta") + [UInt8](repeating: 7, count: 16) + [RecordHeader.inlineMark, 0, 0, 0, 3, 1, 2, 3]
        entries += historyEntry("gamma")
        let wanted = WantedKeys(["gamma", "beta", "zeta"])
        let name = EntityLayout.encodedName("gamma")
        for length in 0...entries.count {
            let cut = Array(entries.prefix(length))
            try guarded.withBytesEndingAtGuard(cut) { section in
                do {
                    var seen: [Int] = []
                    try wanted.visit(in: section) { key, _, _ in seen.append(key) }
                    if length == entries.count { #expect(seen.sorted() == [0, 1]) }
                } catch is EntityError {
                    #expect(length < entries.count)
                }
                do {
                    _ = try name.withUnsafeBytes { try WantedKeys.entry(named: $0, in: section) }
                } catch is EntityError {
                    #expect(length < entries.count)
                }
            }
        }
    }

    /// An empty section (and an empty buffer without an address) shows nothing.
    @Test func emptySectionsShowNothing() throws {
        let wanted = WantedKeys(["a"])
        var calls = 0
        try wanted.visit(in: UnsafeRawBufferPointer(start: nil, count: 0)) { _, _, _ in calls += 1 }
        #expect(calls == 0)
    }

    /// Random sections of well-formed entries (keys of 1 to 20 characters sharing prefixes,
    /// some with zero bytes, which are escaped) and random wanted lists: `visit` shows exactly the
    /// first entry of each wanted key, with its stamp and body, as a plain walk that decodes every
    /// key finds; `endOfName` ends each key where its encoding ends.
    @Test func randomSectionsAgreeWithAWalkThatDecodesEveryKey() throws {
        var random = SeededGenerator(seed: testSeed("WantedKeysTests.randomSections"))
        let alphabet: [Character] = ["a", "b", "n", "\u{0}", "é", "1"]
        func randomKey() -> String {
            let length = Int.random(in: 1...20, using: &random)
            return String((0..<length).map { _ in Bool.random(using: &random) ? "a" : alphabet.randomElement(using: &random)! })
        }
        let pool = (0..<12).map { _ in randomKey() } + ["name", "age", "score", "active", "tag", "a", "aaaaaaaa", "aaaaaaaaa"]
        for _ in 0..<400 {
            let keys = (0..<Int.random(in: 0...10, using: &random)).map { _ in pool.randomElement(using: &random)! }
            var entries: [UInt8] = []
            var model: [(key: String, stamp: [UInt8], body: [UInt8]?)] = []
            for key in keys {
                let stamp = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
                let body: [UInt8]? = Bool.random(using: &random) ? (0..<Int.random(in: 0...12, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) } : nil
                let encoded = EntityLayout.encodedName(key)
                #expect(try encoded.withUnsafeBytes { try WantedKeys.endOfName($0, from: 0) } == encoded.count, "\(key)")
                entries += encoded + stamp
                if let body {
                    entries += [RecordHeader.inlineMark] + withUnsafeBytes(of: UInt32(body.count).bigEndian) { Array($0) } + body
                } else {
                    entries += [RecordHeader.historyMark]
                }
                model.append((key, stamp, body))
            }
            let asked = (0..<Int.random(in: 1...6, using: &random)).map { _ in pool.randomElement(using: &random)! }
            let wanted = WantedKeys(asked)
            var expected: [(Int, [UInt8], [UInt8]?)] = []
            for entry in model {
                guard let index = wanted.keys.firstIndex(of: entry.key), !expected.contains(where: { $0.0 == index }) else { continue }
                expected.append((index, entry.stamp, entry.body))
            }
            var seen: [(Int, [UInt8], [UInt8]?)] = []
            try entries.withUnsafeBytes { section in
                try wanted.visit(in: section) { key, stamp, body in seen.append((key, Array(stamp), body.map { Array($0) })) }
            }
            #expect(seen.map(\.0) == expected.map(\.0), "keys \(keys), asked \(asked)")
            #expect(seen.map(\.1) == expected.map(\.1))
            #expect(seen.map(\.2) == expected.map(\.2))
        }
    }
}
