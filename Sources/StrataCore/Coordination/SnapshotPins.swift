import Glibc
import Synchronization

/// Snapshot pins of readers that may not write the lock file (another user, an extension, a
/// read-only directory or volume): such a reader cannot claim a reader-table slot, so it holds an
/// open-file-description read lock (`F_RDLCK`, which needs only a descriptor opened for reading)
/// on one byte of the lock file per generation it reads, at `base + generation`. Locks may lie
/// beyond the end of the file; nothing is ever written there.
///
/// Claim protocol (the reader table's, with a lock in place of the slot store; see `ReaderTable`):
///  reader: lock byte `base + g`; reload the generation; if it moved, release and retry.
///  writer: publish generation g + 1 ... as the next write transaction begins, ask `F_OFD_GETLK`.
/// The kernel orders the reader's lock and the writer's query: either the query sees the pin, or
/// the reader's reload sees the newer generation and moves on. The kernel drops the locks of a
/// process that dies, so a pin never outlives its reader.
///
/// One open file description holds one lock per byte, however many transactions of the handle
/// read that generation: the pins are counted here and the byte is unlocked with the last one.
final class SnapshotPins: @unchecked Sendable {
    /// Far past the end of any lock file (at most 4096 + 65536 * 64 bytes).
    static let base: Int64 = 1 << 32
    /// Generations above this cannot be pinned (the byte offset would overflow `off_t`).
    static let largestPinnable = UInt64(Int64.max - base - 1)

    private let file: PosixFile
    private let counts = Mutex<[UInt64: Int]>([:])

    init(file: PosixFile) { self.file = file }

    static func byte(_ generation: UInt64) throws -> Int64 {
        guard generation <= largestPinnable else {
            throw StrataError.misuse("generation \(generation) is too large to pin for a read-only reader")
        }
        return base + Int64(generation)
    }

    /// Pins `generation` for one more transaction of this handle.
    func pin(_ generation: UInt64) throws {
        let byte = try SnapshotPins.byte(generation)
        try counts.withLock { counts in
            if let count = counts[generation] {
                counts[generation] = count + 1
                return
            }
            // A read lock is refused only if someone holds a write lock there, which Strata never
            // takes: treat a refusal as the I/O error it would be.
            guard try file.tryLock(offset: byte, exclusive: false) else {
                throw StrataError.io(operation: "fcntl(F_OFD_SETLK) snapshot pin", path: file.path, errno: EAGAIN)
            }
            counts[generation] = 1
        }
    }

    /// Releases one transaction's pin of `generation`.
    func unpin(_ generation: UInt64) {
        guard let byte = try? SnapshotPins.byte(generation) else { return }
        counts.withLock { counts in
            guard let count = counts[generation] else { return }
            if count > 1 {
                counts[generation] = count - 1
            } else {
                counts[generation] = nil
                file.unlock(offset: byte)
            }
        }
    }

    // MARK: The writer's side

    /// The lowest generation from 1 and below `limit` that another open file description pins,
    /// or nil. One `F_OFD_GETLK` when nobody pins; the kernel reports any one conflicting lock, so
    /// the range is narrowed below each lock found until none is left. A pin of generation 0 (a
    /// fresh store: no tree, no page) holds no page back, so it is not looked for: it would keep
    /// the reuse limit at 0 (as the reader table, which takes 0 for an empty slot, never does).
    static func oldestPin(in file: PosixFile, below limit: UInt64) throws -> UInt64? {
        var upper = min(limit, largestPinnable + 1) // exclusive
        var oldest: UInt64?
        while upper > 1, let found = try firstPin(in: file, from: 1, below: upper) {
            oldest = found
            upper = found
        }
        return oldest
    }

    /// Every generation below `limit` pinned by another open file description, ascending (for
    /// reports: a few syscalls per distinct pin).
    static func pinnedGenerations(in file: PosixFile, below limit: UInt64) throws -> [UInt64] {
        var found: [UInt64] = []
        var pending: [(UInt64, UInt64)] = [(0, min(limit, largestPinnable + 1))]
        while let (lower, upper) = pending.popLast() {
            guard lower < upper, let pin = try firstPin(in: file, from: lower, below: upper) else { continue }
            found.append(pin)
            pending.append((lower, pin))
            pending.append((pin + 1, upper))
        }
        return found.sorted()
    }

    /// Some pinned generation in `lower..<upper`, or nil if none is.
    private static func firstPin(in file: PosixFile, from lower: UInt64, below upper: UInt64) throws -> UInt64? {
        guard let lock = try file.conflictingLock(offset: base + Int64(lower), length: Int64(upper - lower)) else { return nil }
        // A lock that starts below the range (several adjacent pins of one reader merge into one
        // lock) still covers `lower`.
        return UInt64(max(lock.start, base + Int64(lower)) - base)
    }
}
