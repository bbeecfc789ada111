import Foundation
import Strata
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// Export and import: full documents round-trip exactly, compact ones by current values, imports
/// merge and are idempotent, bad documents write nothing; the `strata entities` command too.
@Suite struct EntityInterchangeTests {
    /// A store with every value kind, history (removals, equal datestamps, labels), relationships
    /// and a deleted entity.
    func populated() async throws -> EntityStore<ReadWrite> {
        let store = try EntityStore.inMemory()
        let day = { @Sendable (n: Double) in Date(timeIntervalSinceReferenceDate: n * 86_400 + 0.123456789) }
        let ada = EntityReference.named("Ada", ofType: "person").createIfMissing(with: ["born": 1815])
        let gone = EntityReference.new("person", with: ["name": "Gone"])
        try await store.write(at: day(1)) { tx in
            let book = EntityReference.new("book", with: ["title": "Notes", "price": 12.5, "tags": ["a", 1, true]])
            try tx.relate([book], key: "author", to: ada)
            try tx.relate([book], key: "ghost", to: gone)
            try tx.set(["blob": .data(Data([0, 1, 2, 255])), "uuid": .uuid(UUID()), "when": .date(day(0.5)),
                        "nan": .double(.nan), "big": .int(.max)], of: [ada])
            try tx.add(["email": [PropertyEntry("a@b", datestamp: day(1), type: "email"), PropertyEntry(nil, datestamp: day(1)),
                                  PropertyEntry("c@d", datestamp: day(1), type: "email")]], to: ada)
        }
        try await store.set(["born": 1816], of: [ada], at: day(2))
        try await store.delete([gone], at: day(3))
        return store
    }

    @Test func fullRoundTripsExactly() async throws {
        let original = try await populated()
        let document = try await original.exportJSON(.full)
        let copy = try EntityStore.inMemory()
        let report = try await copy.importJSON(document)
        #expect(report.created == 2 && report.deleted == 1)
        #expect(try await copy.exportJSON(.full) == document)
        // Importing again changes nothing (entries already there are skipped).
        let generation = copy.database.generation
        let again = try await copy.importJSON(document)
        #expect(again.entries == 0 && again.created == 0)
        #expect(try await copy.exportJSON(.full) == document)
        #expect(copy.database.generation == generation)
        // History came across too.
        let ada = EntityReference.named("Ada", ofType: "person")
        #expect(try await copy.history(of: ada, key: "email").map(\.value) == ["a@b", nil, "c@d"])
        #expect(try await copy.history(of: ada, key: "email").first?.type == "email")
    }

    @Test func compactRoundTripsCurrentValues() async throws {
        let original = try await populated()
        let document = try await original.exportJSON(.compact)
        let copy = try EntityStore.inMemory()
        try await copy.importJSON(document)
        #expect(try await copy.exportJSON(.compact) == document)
        let ada = EntityReference.named("Ada", ofType: "person")
        let before = try await original.records([ada])[ada]!.properties.mapValues(\.value)
        let after = try await copy.records([ada])[ada]!.properties.mapValues(\.value)
        #expect(before.keys.sorted() == after.keys.sorted())
        for key in before.keys where key != "nan" { #expect(before[key] == after[key], "\(key)") }
        #expect(try await copy.history(of: ada, key: "born").count == 1)
    }

    @Test func badDocumentsWriteNothing() async throws {
        let store = try EntityStore.inMemory()
        let generation = store.database.generation
        let id = EntityID()
        let documents = [
            "not json",
            #"{"format":"other","version":1,"mode":"full","entities":[]}"#,
            #"{"format":"strata-entities","version":2,"mode":"full","entities":[]}"#,
            #"{"format":"strata-entities","version":1,"mode":"full","entities":[{"id":"\#(id)","type":"t","created":0,"modified":0,"properties":{"k":[{"value":{"int":1,"string":"x"},"datestamp":0}]}}]}"#,
            #"{"format":"strata-entities","version":1,"mode":"full","entities":[{"id":"\#(id)","type":"t","created":0,"modified":0,"properties":{"k":[{"value":{"entity":"\#(EntityID())"},"datestamp":0}]}}]}"#,
            #"{"format":"strata-entities","version":1,"mode":"full","entities":[{"id":"\#(id)","type":"t","created":0,"modified":0,"properties":{"\#(String(repeating: "k", count: 5000))":[]}}]}"#,
        ]
        for document in documents {
            await #expect(throws: EntityError.self, "\(document.prefix(80))") { try await store.importJSON(Data(document.utf8)) }
        }
        #expect(store.database.generation == generation)
    }

    /// An import that fails after it appended entries (a relationship to an entity that is not
    /// there is found at its end) fails the write even when the body catches the error: the
    /// entries it appended must not commit.
    @Test func aCaughtFailedImportWritesNothing() async throws {
        let store = try EntityStore.inMemory()
        let generation = store.database.generation
        let id = EntityID()
        let document = #"{"format":"strata-entities","version":1,"mode":"full","entities":[{"id":"\#(id)","type":"t","created":0,"modified":0,"properties":{"a":[{"value":{"int":1},"datestamp":0}],"k":[{"value":{"entity":"\#(EntityID())"},"datestamp":0}]}}]}"#
        await #expect(throws: EntityError.self) {
            try await store.write { tx in
                #expect(throws: EntityError.self) { try tx.importJSON(Data(document.utf8)) }
            }
        }
        #expect(store.database.generation == generation)
        #expect(try await store.records([.id(id)]).isEmpty)
    }

    @Test func cliExportsAndImports() async throws {
        let directory = TemporaryDirectory("cli-entities")
        do {
            var options = DatabaseOptions()
            options.durability = .none
            let store = try EntityStore(at: directory.path, options: options)
            try await store.set(["name": "Ada", "born": 1815], of: [.new("person")])
        }
        let file = directory.parent + "/export.json"
        #expect(try run(["entities", "export", directory.path, "--output", file]).status == 0)
        let copy = directory.parent + "/copy.strata"
        let imported = try run(["entities", "import", copy, "--input", file])
        #expect(imported.status == 0)
        #expect(imported.stderr.contains("1 entities created"))
        let exported = try run(["entities", "export", copy])
        let original = try String(contentsOfFile: file, encoding: .utf8)
        #expect(exported.stdout == original)
        let compact = try run(["entities", "export", copy, "--compact"])
        #expect(compact.stdout.contains(#""values":{"born":{"int":1815},"name":{"string":"Ada"}}"#))
        let bad = try run(["entities", "rename", copy])
        #expect(bad.status == 2)
        let missing = try run(["entities", "import", copy, "--input", directory.parent + "/none.json"])
        #expect(missing.status == 1 && missing.stderr.hasPrefix("strata: "))
    }

    func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: builtExecutable("strata"))
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Small outputs: reading to the end before waiting cannot deadlock on a full pipe.
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }
}
