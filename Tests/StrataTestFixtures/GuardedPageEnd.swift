import Glibc

/// Two anonymous pages, the second `PROT_NONE`: bytes placed here end exactly where the readable
/// memory ends, so a load past their end faults (SIGSEGV) instead of quietly reading whatever
/// follows, as it would in a heap array. For tests of code that compares bytes by word loads.
public final class GuardedPageEnd {
    public let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    private let base: UnsafeMutableRawPointer

    public init() {
        let mapped = mmap(nil, 2 * pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        precondition(mapped != MAP_FAILED, "mmap failed: errno \(errno)")
        base = mapped!
        precondition(mprotect(base + pageSize, pageSize, PROT_NONE) == 0, "mprotect failed: errno \(errno)")
    }

    deinit {
        munmap(base, 2 * pageSize)
    }

    /// Calls `body` with a copy of `bytes` that ends at the guard page (an empty buffer starts there).
    public func withBytesEndingAtGuard<Result>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        precondition(bytes.count <= pageSize)
        let start = base + pageSize - bytes.count
        bytes.withUnsafeBytes { source in
            if let from = source.baseAddress { start.copyMemory(from: from, byteCount: source.count) }
        }
        return try body(UnsafeRawBufferPointer(start: start, count: bytes.count))
    }
}
