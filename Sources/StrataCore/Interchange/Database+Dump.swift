import Glibc

/// The dump format (version 1): UTF-8 JSON lines, keys and values in standard base64.
///
///     {"strata_dump":1,"page_size":4096,"generation":438}     header: format, source page size and generation
///     {"tree":"orders"}                                        the entries below belong to this tree
///     {"k":"AAAAAAAAAAE=","v":"AYAAAAAAAAAB..."}               one entry, in key order
///
/// Trees come in byte order of their names. An entry line may carry more fields (`strata dump
/// --decode` adds "json"); `load` ignores them. `dump` leaves such a field out of a line it would
/// make longer than `load` reads (`DumpLineReader.maximumLineLength`), so every line a dump writes
/// loads. This type builds and parses every kind of line.
public enum DumpLine: Equatable, Sendable {
    case header(version: Int, pageSize: Int?, generation: UInt64?)
    case tree(String)
    case entry(key: [UInt8], value: [UInt8])

    /// The dump format version this build writes and reads.
    public static let formatVersion = 1

    static func headerText(pageSize: Int, generation: UInt64) -> String {
        "{\"strata_dump\":\(formatVersion),\"page_size\":\(pageSize),\"generation\":\(generation)}"
    }

    static func treeText(_ name: String) -> String { "{\"tree\":\(jsonStringLiteral(name))}" }

    /// Appends an entry line, without its closing brace and newline (extra fields may follow).
    static func appendEntryStart(key: ByteView, value: ByteView, to output: inout [UInt8]) {
        output.append(contentsOf: "{\"k\":\"".utf8)
        key.withUnsafeBytes { Base64.encode($0, into: &output) }
        output.append(contentsOf: "\",\"v\":\"".utf8)
        value.withUnsafeBytes { Base64.encode($0, into: &output) }
        output.append(UInt8(ascii: "\""))
    }

    /// Parses one line; nil for a blank line. Throws a description of what is wrong.
    static func parse(_ line: UnsafeRawBufferPointer) throws(DumpLineFailure) -> DumpLine? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return nil }
        let fields: [(String, LineValue)]
        do { fields = try LineParser.parse(line) } catch LineParser.Failure.invalid(let reason) {
            throw DumpLineFailure(reason)
        } catch { throw DumpLineFailure("\(error)") }
        func field(_ name: String) -> LineValue? { fields.first { $0.0 == name }?.1 }
        if let version = field("strata_dump") {
            guard case .number(let text) = version, let number = Int(text) else { throw DumpLineFailure("\"strata_dump\" must be a number") }
            var pageSize: Int?
            if case .number(let text)? = field("page_size") { pageSize = Int(text) }
            var generation: UInt64?
            if case .number(let text)? = field("generation") { generation = UInt64(text) }
            return .header(version: number, pageSize: pageSize, generation: generation)
        }
        if let name = field("tree") {
            guard case .string(let bytes) = name, let text = String(validating: bytes, as: UTF8.self), !text.isEmpty else {
                throw DumpLineFailure("\"tree\" must be a non-empty string")
            }
            return .tree(text)
        }
        if case .string(let keyText)? = field("k"), case .string(let valueText)? = field("v") {
            guard let key = keyText.withUnsafeBytes({ Base64.decode($0) }) else { throw DumpLineFailure("\"k\" is not base64") }
            guard let value = valueText.withUnsafeBytes({ Base64.decode($0) }) else { throw DumpLineFailure("\"v\" is not base64") }
            return .entry(key: key, value: value)
        }
        throw DumpLineFailure("expected {\"tree\":NAME} or {\"k\":BASE64,\"v\":BASE64}")
    }
}

extension DumpLine {
    /// `parse`, with a failure turned into the caller's error.
    static func parse(_ line: UnsafeRawBufferPointer, failing fail: (String) -> any Error) throws -> DumpLine? {
        do { return try parse(line) } catch { throw fail(error.reason) }
    }
}

struct DumpLineFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Why a dump could not be written or loaded.
public enum DumpError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input's first line is not a dump header.
    case notADump(source: String, reason: String)
    /// The dump was written in a format version this build does not read.
    case unsupportedVersion(source: String, found: Int, supported: Int)
    /// Line `line` of the input is not valid (`reason` says why).
    case invalidLine(source: String, line: Int, reason: String)
    /// `load` without `replace` into a store that already holds trees.
    case storeNotEmpty(path: String, trees: Int)
    /// `dump` was asked for a tree the store does not have.
    case noSuchTree(path: String, name: String, available: [String])

    public var description: String {
        switch self {
        case let .notADump(source, reason): return "\(source) is not a strata dump: \(reason)"
        case let .unsupportedVersion(source, found, supported): return "\(source) is dump format \(found); this build reads format \(supported)"
        case let .invalidLine(source, line, reason): return "\(source) line \(line): \(reason)"
        case let .storeNotEmpty(path, trees):
            return "\(path) already holds \(trees) tree\(trees == 1 ? "" : "s"); load into a new path, or pass --replace (replace: true) to replace the trees the dump contains"
        case let .noSuchTree(path, name, available):
            let known = available.isEmpty ? "none" : available.prefix(10).joined(separator: ", ") + (available.count > 10 ? ", ..." : "")
            return "\(path) has no tree named '\(name)' (it has: \(known))"
        }
    }
}

/// What a dump or a load did.
public struct DumpSummary: Sendable, Equatable {
    public var trees = 0
    public var entries = 0
    /// The generation dumped, or the store's generation after a load.
    public var generation: UInt64 = 0
    /// Commits a load made (a batch that changed nothing commits nothing).
    public var commits = 0
}

extension Database {
    /// Writes trees (all, or the ones named, in the order named) of one read snapshot as dump
    /// lines (see `DumpLine`), handing `write` the text in chunks of about 1 MiB of whole lines.
    /// A dump is consistent while writers commit. `annotate` may add a field to an entry's line:
    /// given the tree name and the value, it returns a JSON value to store as `"json"` (or nil).
    /// The field is left out of a line it would make longer than `load` reads (only a value of
    /// more than about a gigabyte comes near), so that every line of the dump loads.
    /// Throws `DumpError.noSuchTree` for a tree the store lacks, and what `write` throws.
    @discardableResult
    public func dump(trees requested: [String] = [], annotate: ((_ tree: String, _ value: ByteView) -> [UInt8]?)? = nil,
                     progress: ((UInt64, UInt64) -> Void)? = nil,
                     to write: (UnsafeRawBufferPointer) throws -> Void) throws -> DumpSummary {
        try dump(trees: requested, annotate: annotate, maximumLineLength: DumpLineReader.maximumLineLength,
                 progress: progress, to: write)
    }

    /// `dump`, with the longest line allowed a parameter (for tests: the real one is gigabytes).
    @discardableResult
    func dump(trees requested: [String], annotate: ((_ tree: String, _ value: ByteView) -> [UInt8]?)?,
              maximumLineLength: Int, progress: ((UInt64, UInt64) -> Void)?,
              to write: (UnsafeRawBufferPointer) throws -> Void) throws -> DumpSummary {
        try read { transaction in
            let names = try transaction.treeNames()
            for name in requested where !names.contains(where: { TreeName.same($0, name) }) {
                throw DumpError.noSuchTree(path: path, name: name, available: names)
            }
            let trees = requested.isEmpty ? names : requested
            let total = try trees.saturatingSum { UInt64(try transaction.count(transaction.tree($0))) }
            var buffer: [UInt8] = []
            buffer.reserveCapacity((1 << 20) + 4096)
            func flush() throws {
                try buffer.withUnsafeBytes { try write($0) }
                buffer.removeAll(keepingCapacity: true)
            }
            var summary = DumpSummary(generation: transaction.generation)
            buffer.append(contentsOf: (DumpLine.headerText(pageSize: pageSize, generation: transaction.generation) + "\n").utf8)
            var done: UInt64 = 0
            for name in trees {
                summary.trees += 1
                buffer.append(contentsOf: (DumpLine.treeText(name) + "\n").utf8)
                try transaction.scan(try transaction.tree(name)) { key, value in
                    let lineStart = buffer.count
                    DumpLine.appendEntryStart(key: key, value: value, to: &buffer)
                    let field = ",\"json\":".utf8
                    // The line without its newline: what is there, the field, and the closing brace.
                    if let json = annotate?(name, value),
                       buffer.count - lineStart + field.count + json.count + 1 <= maximumLineLength {
                        buffer.append(contentsOf: field)
                        buffer.append(contentsOf: json)
                    }
                    buffer.append(contentsOf: "}\n".utf8)
                    if buffer.count >= 1 << 20 { try flush() }
                    done += 1
                    if done % 4096 == 0 { progress?(done, total) }
                    return true
                }
                summary.entries = Int(done)
            }
            try flush()
            progress?(done, total)
            return summary
        }
    }

    /// Loads the rest of a dump: trees are created as they appear (an existing one is emptied
    /// first with `replace`) and entries put in the order given, committing every `batch`
    /// entries, so a failed load leaves the batches before the failure committed. Without
    /// `replace` the store must hold no trees (`DumpError.storeNotEmpty`). A bad line, or one this
    /// store cannot hold (a key too large for its page size), throws `DumpError.invalidLine`
    /// naming it; a failure of the store itself throws its `StrataError` (`diskFull`, `io`, ...).
    @discardableResult
    public func load(_ dump: DumpReader, replace: Bool = false, batch: Int = 10_000,
                     progress: ((_ entries: Int, _ bytesRead: UInt64) -> Void)? = nil) throws -> DumpSummary {
        var summary = DumpSummary()
        let startGeneration = generation
        var transaction = try beginWrite()
        defer { transaction.abort() }
        let existing = try transaction.treeNames()
        if !existing.isEmpty && !replace { throw DumpError.storeNotEmpty(path: path, trees: existing.count) }
        // By bytes (`TreeName`): a dump may hold two trees whose names are only canonically equivalent.
        var loaded = Set<TreeName.Key>()
        var current: (name: String, tree: Tree)?
        var pending = 0
        let source = dump.lines.path
        func invalid(_ reason: String) -> DumpError { DumpError.invalidLine(source: source, line: dump.lines.lineNumber, reason: reason) }
        while let parsed: DumpLine? = try dump.lines.nextLine({ (line) throws -> DumpLine? in
            try DumpLine.parse(line, failing: invalid)
        }) {
            do {
                switch parsed {
                case nil:
                    continue
                case .header?:
                    throw invalid("a second dump header; load one dump at a time")
                case .tree(let name)?:
                    if loaded.contains(TreeName.Key(name)) {
                        current = (name, try transaction.tree(name))
                    } else if let tree = try transaction.treeIfPresent(name) {
                        try transaction.clear(tree)
                        current = (name, tree)
                    } else {
                        current = (name, try transaction.createTree(name))
                    }
                    if loaded.insert(TreeName.Key(name)).inserted { summary.trees += 1 }
                case .entry(let key, let value)?:
                    guard let tree = current?.tree else { throw invalid("an entry comes before any {\"tree\":...} line") }
                    try transaction.put(key, value, in: tree)
                    summary.entries += 1
                    pending += 1
                    if pending >= batch {
                        try transaction.commit()
                        transaction = try beginWrite()
                        if let name = current?.name { current = (name, try transaction.tree(name)) }
                        pending = 0
                    }
                    if summary.entries % 4096 == 0 { progress?(summary.entries, dump.bytesRead) }
                }
            } catch let error as DumpError {
                throw error
            } catch let error as StrataError {
                switch error {
                case .keyTooLarge, .valueTooLarge, .misuse, .treeExists, .treeNotFound:
                    throw invalid("\(error)") // the line asks for something this store cannot hold
                default:
                    throw error // the store's failure (a full disk, an I/O error, a closed handle), not the line's
                }
            } catch {
                throw invalid("\(error)")
            }
        }
        try transaction.commit()
        summary.generation = generation
        summary.commits = Int(summary.generation - startGeneration)
        return summary
    }
}
