// Small Glibc helpers: clocks, CPU time, output, files.
import Glibc

enum Sys {
    /// The executable's name (peer-bench, strata-bench), for messages and temporary directories.
    static let program: String = {
        let path = CommandLine.arguments.first ?? "bench"
        return path.split(separator: "/").last.map(String.init) ?? path
    }()

    /// CLOCK_MONOTONIC in nanoseconds (system-wide, so comparable across processes).
    @inline(__always)
    static func monoNanos() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    static func seconds(since start: UInt64) -> Double {
        Double(monoNanos() &- start) / 1e9
    }

    /// Sleeps until the given CLOCK_MONOTONIC instant (no-op when it has passed).
    static func sleep(untilMonoNanos t: UInt64) {
        var ts = timespec(tv_sec: Int(t / 1_000_000_000), tv_nsec: Int(t % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// User + system CPU seconds consumed by this process so far.
    static func cpuSeconds() -> Double {
        var ru = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &ru)
        let user = Double(ru.ru_utime.tv_sec) + Double(ru.ru_utime.tv_usec) / 1e6
        let sys = Double(ru.ru_stime.tv_sec) + Double(ru.ru_stime.tv_usec) / 1e6
        return user + sys
    }

    static func write(fd: Int32, _ s: String) {
        var s = s
        s.withUTF8 { buf in
            var off = 0
            while off < buf.count {
                let n = Glibc.write(fd, buf.baseAddress! + off, buf.count - off)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                off += n
            }
        }
    }

    static func out(_ line: String) { write(fd: 1, line + "\n") }
    static func err(_ line: String) { write(fd: 2, line + "\n") }

    static func fatal(_ message: String) -> Never {
        err("\(program): error: \(message)")
        exit(1)
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }

    /// Path of the running executable (children re-execute it).
    static func selfExecutable() -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buf, buf.count - 1)
        guard n > 0 else { fatal("readlink /proc/self/exe: \(errnoText())") }
        return buf.withUnsafeBufferPointer { p in
            String(decoding: UnsafeRawBufferPointer(start: p.baseAddress, count: n), as: UTF8.self)
        }
    }

    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func makeDirectories(_ path: String) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                fatal("mkdir \(prefix): \(errnoText())")
            }
        }
    }

    static func makeTempDirectory(prefix: String) -> String {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { fatal("mkdtemp: \(errnoText())") }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `rm -rf path` (no symlink following).
    static func removeTree(_ path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            if let dir = opendir(path) {
                var names: [String] = []
                while let entry = readdir(dir) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                    }
                    if name != "." && name != ".." { names.append(name) }
                }
                closedir(dir)
                for name in names { removeTree(path + "/" + name) }
            }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// Removes and recreates an empty directory.
    static func freshDirectory(_ path: String) {
        removeTree(path)
        makeDirectories(path)
    }

    /// Sum of the sizes of the regular files under `path` (store size after a workload).
    static func treeBytes(_ path: String) -> Int {
        var st = stat()
        guard lstat(path, &st) == 0 else { return 0 }
        if (st.st_mode & S_IFMT) != S_IFDIR { return Int(st.st_blocks) * 512 }
        var total = 0
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
                }
                if name != "." && name != ".." { total += treeBytes(path + "/" + name) }
            }
            closedir(dir)
        }
        return total
    }
}
