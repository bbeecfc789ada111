import Glibc
import StrataCore

/// Output to a file descriptor (stdout or a new file). Callers hand it large chunks (the
/// library's dump buffers about 1 MiB of lines per chunk).
final class ByteSink {
    private let descriptor: Int32
    private let path: String
    private let ownsDescriptor: Bool

    /// An open descriptor this sink does not close: standard output unless told otherwise.
    init(descriptor: Int32 = 1, name: String = "stdout") {
        self.descriptor = descriptor
        path = name
        ownsDescriptor = false
    }

    /// A new file at `path`; fails if anything exists there.
    init(creating path: String) throws {
        descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw errno == EEXIST ? ToolError.failure("\(path) already exists; choose a new file (nothing is overwritten)")
                                  : StrataError.io(operation: "create", path: path, errno: errno)
        }
        self.path = path
        ownsDescriptor = true
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Writes all of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw errno == ENOSPC ? StrataError.diskFull(path: path) : StrataError.io(operation: "write", path: path, errno: errno)
            }
            offset += written
        }
    }
}
