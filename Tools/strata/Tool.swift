import Foundation
import Strata
import StrataCore

/// One `strata` command: its command-line shape and what it does.
protocol Command {
    static var spec: CommandSpec { get }
    /// Runs the command; failures are thrown (see `ToolError` for exit statuses). Commands run on
    /// the main thread (the main actor), not the cooperative pool: they block on the store's API
    /// (reads, commits, fsync, a demo worker's timed loop), and a blocked pool thread would starve
    /// the tasks they start (a change-stream observer) on a machine with one or two cores.
    @MainActor static func run(_ arguments: ParsedArguments) async throws
}

/// Failures the tool reports itself. Engine and typed-layer errors pass through and exit with 1.
enum ToolError: Error {
    /// Bad command line: exit status 2.
    case usage(command: String?, String)
    /// The command could not do its job: exit status 1.
    case failure(String)
}

enum Tool {
    /// Every command, in the order `strata help` lists them.
    static var commands: [any Command.Type] {
        [StatCommand.self, CheckCommand.self, DumpCommand.self, LoadCommand.self, CopyCommand.self,
         ReadersCommand.self, WatchCommand.self, EntitiesCommand.self, DemoCommand.self, DemoWriterCommand.self, DemoWorkerCommand.self]
    }

    static let overview = """
        strata: inspect, verify, back up and exercise Strata stores.

        A store is a directory holding a `data` page file and a `lock` file. Every command that
        reads opens the store read-only and reads committed snapshots, so it is safe to run while
        a writer process is committing.
        """

    @MainActor static func main(_ arguments: [String]) async -> Int32 {
        guard let name = arguments.first else {
            Console.error("missing command; run 'strata help' for the list")
            return 2
        }
        if name == "help" || name == "-h" || name == "--help" {
            return help(topic: arguments.dropFirst().first)
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            Console.error("unknown command '\(name)'; run 'strata help' for the list")
            return 2
        }
        do {
            switch try ArgumentParser.parse(Array(arguments.dropFirst()), for: command.spec) {
            case .help:
                Console.write(command.spec.helpText)
                return 0
            case .run(let parsed):
                try await command.run(parsed)
                return 0
            }
        } catch {
            return report(error)
        }
    }

    /// Prints `error` as one line and returns its exit status.
    static func report(_ error: Error) -> Int32 {
        switch error {
        case ToolError.usage(let command, let message):
            let hint = command.map { "see 'strata \($0) --help'" } ?? "see 'strata help'"
            Console.error("\(command.map { $0 + ": " } ?? "")\(message); \(hint)")
            return 2
        default:
            Console.error(describe(error))
            return 1
        }
    }

    static func help(topic: String?) -> Int32 {
        if let topic {
            guard let command = commands.first(where: { $0.spec.name == topic }) else {
                Console.error("unknown command '\(topic)'; run 'strata help' for the list")
                return 2
            }
            Console.write(command.spec.helpText)
            return 0
        }
        var text = overview + "\n\nusage: strata COMMAND [arguments] [options]\n\ncommands:\n"
        let visible = commands.filter { !$0.spec.hidden }
        let width = visible.map { $0.spec.name.count }.max() ?? 0
        for command in visible {
            text += "  \(command.spec.name)" + String(repeating: " ", count: width - command.spec.name.count + 3) + command.spec.summary + "\n"
        }
        text += "\nRun 'strata COMMAND --help' for a command's arguments and options.\n"
        Console.write(text)
        return 0
    }
}

/// One line describing any error, in the words of the layer that raised it.
func describe(_ error: Error) -> String {
    switch error {
    case let error as StrataError: return error.description
    case let error as DatastoreError: return error.description
    case ToolError.failure(let message): return message
    case ToolError.usage(_, let message): return message
    case let error as CocoaError:
        if let path = error.userInfo[NSFilePathErrorKey] as? String {
            return "\(path): \(error.localizedDescription)"
        }
        return error.localizedDescription
    default:
        return "\(error)"
    }
}
