import Glibc
import StrataCore

/// A file read and written with `pread`/`pwrite`, for what the engine API does not cover: the
/// on-disk format version, raw page copies (`copy`) and page headers (`demo`).
final class RawFile {
    let path: String
    private var descriptor: Int32

    init(path: String, flags: Int32, mode: mode_t = 0o600) throws {
        self.path = path
        descriptor = open(path, flags | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw StrataError.io(operation: "open", path: path, errno: errno) }
    }

    deinit { close() }

    func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                throw StrataError.io(operation: "read", path: path, errno: errno)
            }
            if count == 0 { break }
            done += count
        }
        return done
    }

    func read(count: Int, at offset: UInt64) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = try bytes.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        return Array(bytes.prefix(got))
    }

    func write(_ buffer: UnsafeRawBufferPointer, at offset: UInt64) throws {
        var done = 0
        while done < buffer.count {
            let count = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                throw errno == ENOSPC ? StrataError.diskFull(path: path) : StrataError.io(operation: "write", path: path, errno: errno)
            }
            done += count
        }
    }

    func size() throws -> UInt64 {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw StrataError.io(operation: "fstat", path: path, errno: errno) }
        return UInt64(info.st_size)
    }

    func truncate(to size: UInt64) throws {
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw StrataError.io(operation: "ftruncate", path: path, errno: errno) }
    }

    func sync() throws {
        guard fsync(descriptor) == 0 else { throw StrataError.io(operation: "fsync", path: path, errno: errno) }
    }
}

enum StoreFiles {
    static func dataPath(of store: String) -> String { store + "/data" }

    /// Size in bytes of the store's data file.
    static func dataFileSize(of store: String) throws -> UInt64 {
        var info = stat()
        guard stat(dataPath(of: store), &info) == 0 else { throw StrataError.io(operation: "stat", path: dataPath(of: store), errno: errno) }
        return UInt64(info.st_size)
    }

    /// The format version recorded in the meta pages (u32 at byte 40 after the "STRATABS" magic at
    /// byte 32; see MetaPage). Both metas carry the same version; the first readable one is used.
    static func formatVersion(of store: String, pageSize: Int) throws -> UInt32? {
        let file = try RawFile(path: dataPath(of: store), flags: O_RDONLY)
        for slot in 0..<2 {
            let header = try file.read(count: 48, at: UInt64(slot * pageSize))
            guard header.count == 48 else { continue }
            let magic = header[32..<40].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            guard magic == 0x5342_4154_4152_5453 else { continue }
            return header[40..<44].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        }
        return nil
    }

    /// Whether anything exists at `path` (a file, directory or dangling link).
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }
}

/// Little-endian integer at `offset` of a byte buffer.
func loadLittleEndian<T: FixedWidthInteger>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, at offset: Int) -> T {
    T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
}
