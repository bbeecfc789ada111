/// A dump being read, line by line, from a file descriptor. Its header is read at once, so the
/// page size for a new store is known before the store is created.
///
/// ```swift
/// let reader = try DumpReader(fileDescriptor: 0, name: "stdin")
/// var options = DatabaseOptions()
/// options.pageSize = reader.pageSize ?? options.pageSize
/// let summary = try Database(path: "copy.strata", options: options).load(reader)
/// ```
public final class DumpReader {
    let lines: DumpLineReader
    /// The page size of the store the dump was made from, if the header names a valid one.
    public let pageSize: Int?
    /// The generation the dump was made from, if the header names it.
    public let generation: UInt64?

    /// Reads from `fileDescriptor` (not closed by the reader); `name` appears in errors.
    public convenience init(fileDescriptor: Int32, name: String) throws {
        try self.init(fileDescriptor: fileDescriptor, name: name, maximumLineLength: DumpLineReader.maximumLineLength)
    }

    /// Reads with the longest line allowed a parameter (for tests: the real one is gigabytes).
    init(fileDescriptor: Int32, name: String, maximumLineLength: Int) throws {
        lines = DumpLineReader(descriptor: fileDescriptor, path: name, maximumLineLength: maximumLineLength)
        var header: DumpLine?
        while header == nil {
            let parsed: DumpLine?? = try lines.nextLine { (line) throws -> DumpLine? in
                try DumpLine.parse(line) { DumpError.notADump(source: name, reason: $0) }
            }
            guard let line = parsed else { throw DumpError.notADump(source: name, reason: "it is empty") }
            header = line
        }
        guard case .header(let version, let pageSize, let generation)? = header else {
            throw DumpError.notADump(source: name, reason: "its first line has no \"strata_dump\" field")
        }
        guard version == DumpLine.formatVersion else {
            throw DumpError.unsupportedVersion(source: name, found: version, supported: DumpLine.formatVersion)
        }
        self.pageSize = pageSize.flatMap { PageLayout.isValidPageSize($0) ? $0 : nil }
        self.generation = generation
    }

    /// Bytes consumed so far (for progress against the input's size).
    public var bytesRead: UInt64 { lines.bytesRead }
}
