// Child processes: the binary re-executes itself (/proc/self/exe) with `--role ...` via
// posix_spawn (never fork). The parent talks to a child through its stdin/stdout pipes,
// one text line per message; the child's stderr is inherited.
import Glibc

/// Line-oriented reader over a file descriptor.
final class LineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) { self.fd = fd }

    /// The next line without its newline, or nil at end of file.
    func readLine() -> String? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<nl], as: UTF8.self)
                buffer.removeSubrange(...nl)
                return line
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                guard !buffer.isEmpty else { return nil }
                let line = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return line
            }
            buffer.append(contentsOf: chunk[..<n])
        }
    }
}

final class ChildProcess {
    let pid: pid_t
    private let stdinFD: Int32
    private let stdoutFD: Int32
    private let reader: LineReader
    private var exited = false

    init(arguments: [String]) {
        let exe = Sys.selfExecutable()
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else {
            Sys.fatal("pipe: \(Sys.errnoText())")
        }
        // Single-threaded, so setting close-on-exec after pipe() cannot race with a spawn.
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears FD_CLOEXEC on the target; every other pipe end is closed by exec.
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)

        let argv: [UnsafeMutablePointer<CChar>?] = ([exe] + arguments).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, exe, &actions, nil, argv, environ)
        guard rc == 0 else { Sys.fatal("posix_spawn \(exe): \(String(cString: strerror(rc)))") }
        Glibc.close(toChild[0])
        Glibc.close(fromChild[1])
        pid = child
        stdinFD = toChild[1]
        stdoutFD = fromChild[0]
        reader = LineReader(fd: stdoutFD)
    }

    func send(_ line: String) { Sys.write(fd: stdinFD, line + "\n") }

    /// Reads the next line; a child that exits early is a fatal error.
    func expectLine(_ what: String) -> String {
        guard let line = reader.readLine() else {
            Sys.fatal("child \(pid) exited before sending \(what) (status \(wait()))")
        }
        return line
    }

    /// Waits for the child to exit and returns its exit status (or 128+signal).
    @discardableResult
    func wait() -> Int32 {
        guard !exited else { return 0 }
        exited = true
        Glibc.close(stdinFD)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        Glibc.close(stdoutFD)
        let code = (status >> 8) & 0xFF
        let signal = status & 0x7F
        return signal != 0 ? 128 + signal : code
    }
}

/// The child side of the protocol: lines on stdin from the parent, lines to stdout.
final class ParentLink {
    private let input = LineReader(fd: 0)

    func send(_ line: String) { Sys.out(line) }

    func expectLine(_ what: String) -> String {
        guard let line = input.readLine() else {
            Sys.fatal("parent closed the pipe before sending \(what)")
        }
        return line
    }
}
