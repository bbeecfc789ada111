// The command-line parser: one `CommandSpec` per command, parsed into `ParsedArguments`.
//
// Accepted forms: `--name value`, `--name=value`, `-n value`, flags `--name`/`-n`, `--` to end
// options, `-h`/`--help` anywhere. Anything wrong is a `ToolError.usage` (exit status 2).

/// An option a command accepts.
struct OptionSpec: Sendable {
    /// Long name without dashes ("seconds").
    let name: String
    let short: Character?
    /// The placeholder in help ("S"), or nil for a flag.
    let valueName: String?
    let help: String

    init(_ name: String, short: Character? = nil, value valueName: String? = nil, help: String) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.help = help
    }

    var takesValue: Bool { valueName != nil }
}

/// What a command looks like on the command line, and its help text.
struct CommandSpec: Sendable {
    let name: String
    /// Positional part of the usage line ("PATH [TREE ...]").
    let synopsis: String
    /// One line for `strata help`.
    let summary: String
    /// Paragraphs after the usage line in `strata NAME --help`.
    let discussion: String
    /// Names of the positional arguments, in order; the last may be variadic.
    let positionals: [String]
    /// How many of them are required.
    let requiredPositionals: Int
    let variadic: Bool
    let options: [OptionSpec]
    /// Internal commands (the demo's child processes) are not listed in `strata help`.
    let hidden: Bool

    init(name: String, synopsis: String, summary: String, discussion: String = "", positionals: [String],
         required: Int? = nil, variadic: Bool = false, options: [OptionSpec] = [], hidden: Bool = false) {
        self.name = name
        self.synopsis = synopsis
        self.summary = summary
        self.discussion = discussion
        self.positionals = positionals
        requiredPositionals = required ?? positionals.count
        self.variadic = variadic
        self.options = options
        self.hidden = hidden
    }

    var usageLine: String {
        let options = self.options.isEmpty ? "" : " [options]"
        return "strata \(name)\(synopsis.isEmpty ? "" : " " + synopsis)\(options)"
    }

    var helpText: String {
        var text = "usage: \(usageLine)\n\n\(summary)\n"
        if !discussion.isEmpty { text += "\n\(discussion)\n" }
        text += "\noptions:\n"
        var rows: [(String, String)] = []
        for option in options {
            var left = option.short.map { "-\($0), " } ?? "    "
            left += "--\(option.name)"
            if let value = option.valueName { left += " \(value)" }
            rows.append((left, option.help))
        }
        rows.append(("-h, --help", "show this help"))
        let width = rows.map(\.0.count).max() ?? 0
        for (left, right) in rows {
            text += "  " + left + String(repeating: " ", count: width - left.count + 2) + right + "\n"
        }
        return text
    }
}

/// The arguments of one command after parsing.
struct ParsedArguments {
    let spec: CommandSpec
    var positionals: [String] = []
    var flags: Set<String> = []
    var values: [String: String] = [:]

    func flag(_ name: String) -> Bool { flags.contains(name) }

    func string(_ name: String) -> String? { values[name] }

    func integer(_ name: String, default fallback: Int, in range: ClosedRange<Int>) throws -> Int {
        guard let text = values[name] else { return fallback }
        guard let value = Int(text.replacingOccurrences(of: "_", with: "")), range.contains(value) else {
            throw ToolError.usage(command: spec.name, "--\(name) needs a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return value
    }

    func number(_ name: String, default fallback: Double, in range: ClosedRange<Double>) throws -> Double {
        guard let text = values[name] else { return fallback }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw ToolError.usage(command: spec.name, "--\(name) needs a number in \(formatNumber(range.lowerBound))...\(formatNumber(range.upperBound)), not '\(text)'")
        }
        return value
    }

    func choice(_ name: String, from choices: [String], default fallback: String) throws -> String {
        guard let text = values[name] else { return fallback }
        guard choices.contains(text) else {
            throw ToolError.usage(command: spec.name, "--\(name) must be one of \(choices.joined(separator: ", ")), not '\(text)'")
        }
        return text
    }

    private func formatNumber(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// The outcome of parsing: arguments to run with, or a request for help.
enum ParseResult {
    case run(ParsedArguments)
    case help
}

enum ArgumentParser {
    static func parse(_ arguments: [String], for spec: CommandSpec) throws -> ParseResult {
        var parsed = ParsedArguments(spec: spec)
        var index = 0
        var optionsEnded = false
        func option(named name: String, spelled: String) throws -> OptionSpec {
            guard let option = spec.options.first(where: { $0.name == name }) else {
                throw ToolError.usage(command: spec.name, "unknown option \(spelled)")
            }
            return option
        }
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" || argument == "--help" { return .help }
            let spec: OptionSpec
            var inlineValue: String?
            if argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    inlineValue = String(name[name.index(after: equals)...])
                    name = String(name[..<equals])
                }
                spec = try option(named: name, spelled: "--" + name)
            } else {
                let letters = Array(argument.dropFirst())
                guard letters.count == 1, let found = parsed.spec.options.first(where: { $0.short == letters[0] }) else {
                    throw ToolError.usage(command: parsed.spec.name, "unknown option \(argument)")
                }
                spec = found
            }
            if spec.takesValue {
                if inlineValue == nil {
                    guard index < arguments.count else {
                        throw ToolError.usage(command: parsed.spec.name, "--\(spec.name) needs a value (\(spec.valueName!))")
                    }
                    inlineValue = arguments[index]
                    index += 1
                }
                parsed.values[spec.name] = inlineValue
            } else {
                guard inlineValue == nil else {
                    throw ToolError.usage(command: parsed.spec.name, "--\(spec.name) takes no value")
                }
                parsed.flags.insert(spec.name)
            }
        }
        if parsed.positionals.count < spec.requiredPositionals {
            let missing = spec.positionals[parsed.positionals.count]
            throw ToolError.usage(command: spec.name, "missing \(missing)")
        }
        if !spec.variadic && parsed.positionals.count > spec.positionals.count {
            let extra = parsed.positionals[spec.positionals.count]
            throw ToolError.usage(command: spec.name, "unexpected argument '\(extra)'")
        }
        return .run(parsed)
    }
}
