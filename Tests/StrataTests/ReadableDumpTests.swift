import Foundation
import Testing
import Strata
import StrataCore
import StrataTestFixtures

struct Gadget: Codable, Sendable, Identifiable, Equatable {
    struct Part: Codable, Sendable, Equatable { var name: String; var weight: Double }
    var id: UUID
    var label: String
    var count: Int
    var delta: Int32
    var enabled: Bool
    var made: Date
    var blob: Data
    var parts: [Part]
    var tags: [String: Int]
    var note: String?
}

struct GadgetFormat: DatastoreFormat {
    static let name = "gadgets"
    typealias Instance = Gadget
    typealias Identifier = UUID
    @Direct var label = OneToOneIndex(\.label)
}

/// `strata dump --decode` and `StoreInspector.json(ofEnvelope:in:)` for binary-coded instances.
@Suite struct ReadableDumpTests {
    private let first = Gadget(id: UUID(uuidString: "8A0F6C8E-8C2B-4C54-9C5B-2B0C3A1D9E01")!, label: "first", count: -3, delta: 7, enabled: true,
                               made: Date(timeIntervalSince1970: 1_700_000_000.5), blob: Data([1, 2, 255]),
                               parts: [.init(name: "cog", weight: 1.5)], tags: ["a": 1], note: nil)
    private let second = Gadget(id: UUID(uuidString: "8A0F6C8E-8C2B-4C54-9C5B-2B0C3A1D9E02")!, label: "second \"quoted\"\n", count: 4,
                                delta: -1, enabled: false, made: Date(timeIntervalSince1970: 0), blob: Data(), parts: [], tags: [:],
                                note: "present")

    private func json(_ bytes: [UInt8]?) throws -> [String: Any] {
        let text = try #require(bytes)
        let object = try JSONSerialization.jsonObject(with: Data(text))
        return try #require(object as? [String: Any])
    }

    @Test func binaryInstancesRenderAsJSONWithoutTheirType() throws {
        let store = try Store.inMemory()
        let gadgets = try store.datastore(GadgetFormat.self)
        try gadgets.persist(first)
        try gadgets.persist(second)   // its note is recorded too: the shapes of sampled writes merge
        let summary = try #require(try store.datastoreSummaries().first)
        let envelopes = try store.database.read { tx in
            try [first.id, second.id].map { try tx.get($0.orderedKeyBytes, in: tx.tree("gadgets"))!.bytes }
        }
        let one = try json(StoreInspector.json(ofEnvelope: envelopes[0], in: summary))
        #expect(one["id"] as? String == "8A0F6C8E-8C2B-4C54-9C5B-2B0C3A1D9E01")
        #expect(one["label"] as? String == "first")
        #expect(one["count"] as? Int == -3)
        #expect(one["delta"] as? Int == 7)
        #expect(one["enabled"] as? Bool == true)
        #expect(one["made"] as? String == "2023-11-14T22:13:20.500Z")
        #expect(one["blob"] as? String == "AQL/")
        #expect((one["parts"] as? [[String: Any]])?.first?["weight"] as? Double == 1.5)
        #expect((one["tags"] as? [String: Any])?["a"] as? Int == 1)
        #expect(one["note"] == nil)
        let two = try json(StoreInspector.json(ofEnvelope: envelopes[1], in: summary))
        #expect(two["label"] as? String == "second \"quoted\"\n")
        #expect(two["note"] as? String == "present")
        #expect((two["parts"] as? [Any])?.isEmpty == true)
    }

    @Test func undescribedFieldsShowTheirBytes() throws {
        let store = try Store.inMemory()
        let gadgets = try store.datastore(GadgetFormat.self)
        try gadgets.persist(first)
        // A shape that predates the "note" field (as if recorded by an older build).
        let summary = try #require(try store.datastoreSummaries().first)
        let envelope = try store.database.read { tx in
            try tx.get(first.id.orderedKeyBytes, in: tx.tree("gadgets"))!.bytes
        }
        var withNote = first
        withNote.note = "later"
        try store.write { tx in
            // Stop sampling in this process so the shape stays as recorded.
            for _ in 0..<20 { try tx[gadgets].persist(first) }
        }
        try gadgets.persist(withNote)
        let laterEnvelope = try store.database.read { tx in try tx.get(first.id.orderedKeyBytes, in: tx.tree("gadgets"))!.bytes }
        let noted = try json(StoreInspector.json(ofEnvelope: laterEnvelope, in: summary))
        #expect((noted["note"] as? [String: Any])?["$base64"] as? String == "BWxhdGVy")
        #expect(try json(StoreInspector.json(ofEnvelope: envelope, in: summary))["label"] as? String == "first")
    }

    @Test func strataDumpDecodeShowsBinaryInstances() throws {
        let dir = TemporaryDirectory()
        do {
            let store = try Store(at: dir.path)
            try store.datastore(GadgetFormat.self).persist(first)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: builtExecutable("strata"))
        process.arguments = ["dump", dir.path, "gadgets", "gadgets#index.label", "gadgets#log", "--decode"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 7, "\(text)")   // header, then each tree and its one entry
        // The instance and its direct index copy are shown; the change log is not an instance.
        #expect(lines[2].contains(#""json":{"id":"8A0F6C8E-8C2B-4C54-9C5B-2B0C3A1D9E01","label":"first","count":-3"#), "\(lines[2])")
        #expect(lines[4].contains(#""json":{"id":"8A0F6C8E"#), "\(lines[4])")
        #expect(!lines[6].contains("json"), "\(lines[6])")
    }
}
