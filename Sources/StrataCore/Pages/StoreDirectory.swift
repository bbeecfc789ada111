import Glibc

/// Creation of a store's directory and data file.
enum StoreDirectory {
    static func prepare(path: String, create: Bool, fileMode: mode_t) throws {
        var info = stat()
        if lstat(path, &info) != 0 {
            guard errno == ENOENT else { throw PosixFile.error("lstat", path) }
            guard create else { throw StrataError.notAStore(path: path, reason: "it does not exist") }
            // Directories need search permission wherever the files grant read permission.
            let directoryMode = fileMode | ((fileMode & 0o444) >> 2)
            if mkdir(path, directoryMode) != 0 && errno != EEXIST { throw PosixFile.error("mkdir", path) }
            return
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: return
        case S_IFLNK: throw StrataError.notAStore(path: path, reason: "it is a symbolic link; open the directory it points to")
        default: throw StrataError.notAStore(path: path, reason: "it is not a directory")
        }
    }

    /// Creates the data file atomically: the two generation-0 metas are written and synced to a
    /// temporary file that is then hard-linked into place. `link` fails if `data` appeared in the
    /// meantime (another process created it), so a store file is never replaced.
    static func createDataFileIfMissing(at dataPath: String, pageSize: Int, fileMode: mode_t) throws {
        if access(dataPath, F_OK) == 0 { return }
        let temporaryPath = dataPath + ".new-\(getpid())"
        unlink(temporaryPath)
        let file = try PosixFile(path: temporaryPath, flags: O_RDWR | O_CREAT | O_EXCL, mode: fileMode)
        defer { unlink(temporaryPath) }
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 2 * pageSize, alignment: 64)
        defer { bytes.deallocate() }
        memset(bytes, 0, 2 * pageSize)
        let meta = MetaPage.initial(pageSize: pageSize)
        meta.encode(into: bytes, byteCount: pageSize, slot: 0)
        meta.encode(into: bytes + pageSize, byteCount: pageSize, slot: 1)
        try file.write(UnsafeRawBufferPointer(start: bytes, count: 2 * pageSize), at: 0)
        try file.syncData()
        file.close()
        if link(temporaryPath, dataPath) != 0 && errno != EEXIST { throw PosixFile.error("link", dataPath) }
        syncDirectory(of: dataPath)
    }

    /// Makes a new directory entry durable.
    static func syncDirectory(of path: String) {
        var directory = path
        if let slash = directory.lastIndex(of: "/") { directory = String(directory[..<slash]) } else { directory = "." }
        let fd = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            Glibc.close(fd)
        }
    }
}

/// Reading the metas at open time (with `pread`, before anything is mapped).
enum MetaReader {
    /// The newest meta that validates. A torn or corrupt newest meta falls back to the other one.
    static func newestMeta(of file: PosixFile, storePath: String) throws -> MetaPage {
        let size = try file.size()
        guard size > 0 else { throw StrataError.notAStore(path: storePath, reason: "the data file is empty") }
        var candidates: [MetaPage] = []
        var failures: [MetaPage.DecodeFailure] = []
        let first = try readMeta(file, offset: 0, slot: 0)
        var pageSizes = [PageLayout.minimumPageSize, 8192, 16384, PageLayout.maximumPageSize]
        switch first {
        case .success(let meta):
            candidates.append(meta)
            pageSizes = [meta.pageSize]
        case .failure(let failure):
            failures.append(failure)
        }
        // Meta 1 sits one page in; if meta 0 is unreadable, try every legal page size.
        var foundSecond = false
        for pageSize in pageSizes where UInt64(pageSize + MetaPage.encodedSize) <= size {
            switch try readMeta(file, offset: UInt64(pageSize), slot: 1) {
            case .success(let meta) where meta.pageSize == pageSize:
                candidates.append(meta)
                foundSecond = true
            case .success:
                failures.append(.invalid("meta 1 page size disagrees"))
            case .failure(let failure):
                failures.append(failure)
            }
            if foundSecond { break }
        }
        if let best = candidates.max(by: { $0.transactionID < $1.transactionID }) {
            if candidates.count == 2, candidates[0].pageSize != candidates[1].pageSize {
                throw StrataError.corruptMeta(path: storePath, reason: "the two metas disagree on the page size")
            }
            return best
        }
        for failure in failures {
            if case .unsupportedVersion(let version) = failure {
                throw StrataError.unsupportedFormat(path: storePath, found: version, supported: PageLayout.formatVersion)
            }
        }
        if failures.allSatisfy({ $0 == .notAStore }) {
            throw StrataError.notAStore(path: storePath, reason: "the data file does not start with a Strata header")
        }
        let reasons = failures.compactMap { failure -> String? in
            if case .invalid(let reason) = failure { return reason }
            return nil
        }
        throw StrataError.corruptMeta(path: storePath, reason: reasons.joined(separator: "; "))
    }

    private static func readMeta(_ file: PosixFile, offset: UInt64, slot: UInt64) throws -> Result<MetaPage, MetaPage.DecodeFailure> {
        var bytes = [UInt8](repeating: 0, count: MetaPage.encodedSize)
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: MetaPage.encodedSize, at: offset) }
        guard count == MetaPage.encodedSize else { return .failure(.invalid("meta \(slot) is cut short")) }
        return bytes.withUnsafeBytes { MetaPage.decode($0, slot: slot) }
    }

    static func checkLength(_ fileSize: UInt64, of meta: MetaPage, storePath: String) throws {
        let needed = meta.pageCount * UInt64(meta.pageSize)
        guard fileSize >= needed else {
            throw StrataError.truncatedFile(path: storePath + "/data", expectedBytes: needed, actualBytes: fileSize)
        }
    }
}
