import Foundation
import Glibc
import StrataTestFixtures
import Testing
@testable import StrataCore

/// Every line `dump` writes for a valid store loads, annotated (`strata dump --decode`) or not
/// (found in review: the line cap counted keys and values only, so a "json" field on a value of
/// more than about a gigabyte made a line `load` refused). The limit is a parameter here: the
/// real one is gigabytes.
@Suite struct DumpAnnotationLimitTests {
    @Test func anAnnotationThatWouldPassTheLineLimitIsLeftOutAndTheDumpLoads() throws {
        let dir = TemporaryDirectory()
        let source = try Database(path: dir.parent + "/source.strata")
        defer { source.close() }
        try source.write { tx in
            let tree = try tx.createTree("t")
            try tx.put(Array("big".utf8), [UInt8](repeating: 1, count: 3_000), in: tree)
            try tx.put(Array("small".utf8), Array("v".utf8), in: tree)
        }
        let limit = 5_000   // the big entry's plain line (about 4,000 bytes) fits; annotated it would not
        var text: [UInt8] = []
        try source.dump(trees: [], annotate: { _, value in
            Array("\"".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: value.count) + Array("\"".utf8)
        }, maximumLineLength: limit, progress: nil) { text.append(contentsOf: $0) }

        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n")
        #expect(lines.allSatisfy { $0.utf8.count <= limit })
        let big = try #require(lines.first { $0.hasPrefix("{\"k\":\"\(Data("big".utf8).base64EncodedString())\"") })
        #expect(!big.contains("\"json\""))
        let small = try #require(lines.first { $0.hasPrefix("{\"k\":\"\(Data("small".utf8).base64EncodedString())\"") })
        #expect(small.contains("\"json\":\"x\""))

        let path = dir.parent + "/dump.jsonl"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text)))
        let descriptor = open(path, O_RDONLY)
        defer { close(descriptor) }
        let target = try Database(path: dir.path)
        defer { target.close() }
        let summary = try target.load(try DumpReader(fileDescriptor: descriptor, name: path, maximumLineLength: limit))
        #expect(summary.entries == 2)
        let loaded = try target.read { tx in try tx.get(Array("big".utf8), in: tx.tree("t"))?.bytes }
        #expect(loaded == [UInt8](repeating: 1, count: 3_000))
    }
}
