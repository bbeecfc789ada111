import Glibc
import Synchronization

/// A `MAP_SHARED` mapping of the lock file: the only memory the processes of one store
/// write in common. It hands out typed atomics at fixed, bounds-checked offsets; nothing else
/// touches its raw pointer.
final class SharedMemory: @unchecked Sendable {
    // The mapping is created once and unmapped once, in deinit; all access goes through atomics.
    private let base: UnsafeMutableRawPointer
    let length: Int

    /// Maps `length` bytes of `file`. A read-only mapping (`writable: false`, for a handle whose
    /// descriptor is read-only) may only be loaded from: storing through it is a `SIGSEGV`, so
    /// the types that hold one never store (see `SnapshotRegistration`).
    init(file: PosixFile, length: Int, writable: Bool = true) throws {
        guard let address = mmap(nil, length, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, file.descriptor, 0),
              address != MAP_FAILED else {
            throw PosixFile.error("mmap", file.path)
        }
        base = address
        self.length = length
    }

    /// Private zeroed memory shaped like a lock file, for a handle that has no lock file to share.
    init(privateLength length: Int) throws {
        guard let address = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              address != MAP_FAILED else {
            throw PosixFile.error("mmap", "anonymous memory")
        }
        base = address
        self.length = length
    }

    deinit { munmap(base, length) }

    func atomic64(at offset: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        precondition(offset >= 0 && offset + 8 <= length && offset % 8 == 0, "shared offset \(offset) out of range")
        return (base + offset).assumingMemoryBound(to: Atomic<UInt64>.self)
    }

    func atomic32(at offset: Int) -> UnsafeMutablePointer<Atomic<UInt32>> {
        precondition(offset >= 0 && offset + 4 <= length && offset % 4 == 0, "shared offset \(offset) out of range")
        return (base + offset).assumingMemoryBound(to: Atomic<UInt32>.self)
    }

    func zero(from offset: Int, count: Int) {
        precondition(offset >= 0 && offset + count <= length)
        memset(base + offset, 0, count)
    }
}
