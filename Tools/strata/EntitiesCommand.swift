import Foundation
import Glibc
import Strata
import StrataCore
import StrataEntities

/// `strata entities export|import PATH`: the entity store's JSON interchange document.
enum EntitiesCommand: Command {
    static let spec = CommandSpec(
        name: "entities", synopsis: "export|import PATH",
        summary: "Export the entity store (StrataEntities) as JSON, or import such a document.",
        discussion: """
            export writes the whole entity store of one snapshot: full (default: every entry of
            every property with its datestamp and label, and the deleted identifiers; it round-trips
            exactly) or --compact (current values only). import adds a document in one transaction,
            merging: unknown entities are created, entries the store already has are skipped, and
            entities listed as deleted are deleted; an import that fails writes nothing. The format
            is described in Sources/StrataEntities/Interchange/EntityInterchange.swift.
            """,
        positionals: ["ACTION", "PATH"], required: 2,
        options: [
            OptionSpec("compact", help: "export: current values only"),
            OptionSpec("output", short: "o", value: "FILE", help: "export: write to FILE (must not exist) instead of stdout"),
            OptionSpec("input", short: "i", value: "FILE", help: "import: read FILE instead of stdin"),
        ])

    static func run(_ arguments: ParsedArguments) async throws {
        let path = arguments.positionals[1]
        switch arguments.positionals[0] {
        case "export":
            let store = try EntityStore(at: path, mode: .readOnly)
            let document = try await store.exportJSON(arguments.flag("compact") ? .compact : .full)
            let output = arguments.string("output")
            let sink = try output.map { try ByteSink(creating: $0) } ?? ByteSink()
            var bytes = [UInt8](document)
            bytes.append(UInt8(ascii: "\n"))
            try bytes.withUnsafeBytes { try sink.write($0) }
        case "import":
            let data: Data
            if let input = arguments.string("input") {
                guard let contents = FileManager.default.contents(atPath: input) else {
                    throw ToolError.failure("cannot read \(input)")
                }
                data = contents
            } else {
                data = FileHandle.standardInput.readDataToEndOfFile()
            }
            let store = try EntityStore(at: path)
            let report = try await store.importJSON(data)
            Console.note("imported: \(report.created) entities created, \(report.entries) entries added, \(report.deleted) deleted")
        case let action:
            throw ToolError.usage(command: "entities", "unknown action '\(action)' (use export or import)")
        }
    }
}
