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
        meta.encode(into: bytes, slot: 0)
        meta.encode(into: bytes + pageSize, slot: 1)
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
        sync(directory: directory.isEmpty ? "/" : directory)
    }

    /// Syncs the directory at `directory` itself (the entries in it), best effort like
    /// `syncDirectory(of:)`.
    static func sync(directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            Glibc.close(fd)
        }
    }
}
