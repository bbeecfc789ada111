import Glibc
import Synchronization

/// The `lock` file: writer lock, generation counter and reader table, shared by every process that
/// opens the store.
///
/// Layout (all integers little-endian, atomics naturally aligned):
///
///     0    u64 magic "STRATALK"          64   Atomic u64 generation (last committed transaction)
///     8    u32 lock format version       128  Atomic u32 writer pid (0 = no writer)
///     12   u32 reader slot count         192  Atomic u64 last commit time (ns since 1970)
///     16   u32 data page size            (other bytes below 4096 are reserved, zero)
///     24   u64 data file inode
///     4096 reader slots, 64 bytes each (see `ReaderTable`)
///
/// Byte-range locks (OFD, never on data the processes read): byte 0 is the writer lock, byte 1
/// serializes set-up, byte 2 is held shared by every open handle (exclusive means "nobody else has
/// the store open", which is when the file may be reset), and each reader slot's first byte is held
/// exclusively by the handle that owns the slot: a slot whose byte can be locked has no live owner.
final class LockFile: @unchecked Sendable {
    static let magic: UInt64 = 0x4B4C_4154_4152_5453 // "STRATALK"
    static let formatVersion: UInt32 = 1
    static let slotsOffset = 4096
    static let slotSize = 64

    static let writerLockByte: Int64 = 0
    static let setupLockByte: Int64 = 1
    static let openHandlesByte: Int64 = 2

    private static let generationOffset = 64
    private static let writerPIDOffset = 128
    private static let lastCommitTimeOffset = 192

    let file: PosixFile
    let memory: SharedMemory
    let slotCount: Int

    var generation: UnsafeMutablePointer<Atomic<UInt64>> { memory.atomic64(at: LockFile.generationOffset) }
    var writerPID: UnsafeMutablePointer<Atomic<UInt32>> { memory.atomic32(at: LockFile.writerPIDOffset) }
    var lastCommitTime: UnsafeMutablePointer<Atomic<UInt64>> { memory.atomic64(at: LockFile.lastCommitTimeOffset) }

    static func byteCount(slots: Int) -> Int { slotsOffset + slots * slotSize }

    /// Opens (creating if needed) the lock file and joins the set of open handles. When no other
    /// handle has the store open, the file is (re)initialized: stale generation and reader slots
    /// left by processes that died are discarded and the generation is set from `committedGeneration`.
    /// Runs under the set-up lock so two openers never initialize concurrently.
    init(path: String, requestedSlots: Int, pageSize: Int, dataFile: PosixFile, dataInode: UInt64, fileMode: mode_t,
         committedGeneration: () throws -> UInt64) throws {
        let file = try PosixFile(path: path, flags: O_RDWR | O_CREAT, mode: fileMode)
        try file.lockWaiting(offset: LockFile.setupLockByte)
        defer { file.unlock(offset: LockFile.setupLockByte) }

        var alone = try file.tryLock(offset: LockFile.openHandlesByte, exclusive: true)
        var header = try Header(of: file)
        // A descriptor may hold the file for an instant after its handle closed: a child process
        // spawned by another thread keeps copies of its parent's descriptors until it execs. Wait
        // a little for that before calling an invalid file one that is in use.
        for _ in 0..<100 where !alone && !header.isValid(forDataInode: dataInode) {
            usleep(1000)
            alone = try file.tryLock(offset: LockFile.openHandlesByte, exclusive: true)
            header = try Header(of: file)
        }
        let headerValid = header.isValid(forDataInode: dataInode)

        if alone {
            // Nobody has this lock file open, yet a writer may be running: one whose lock file was
            // deleted or replaced keeps the data file's writer lock (`WriterLock`). A fresh table
            // here would be one that writer never reads or publishes to: refuse.
            try LockFile.refuseIfAWriterHoldsTheDataFile(dataFile, lockPath: path)
            // Nobody else has the store open: start from a clean table.
            let slots = max(1, min(requestedSlots, 1 << 16))
            let size = LockFile.byteCount(slots: slots)
            try file.setSize(0)
            try file.setSize(UInt64(size))
            let memory = try SharedMemory(file: file, length: size)
            memory.zero(from: 0, count: size)
            let generation = try committedGeneration()
            var fresh = [UInt8](repeating: 0, count: 32)
            fresh.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: LockFile.magic, toByteOffset: 0, as: UInt64.self)
                raw.storeBytes(of: LockFile.formatVersion, toByteOffset: 8, as: UInt32.self)
                raw.storeBytes(of: UInt32(slots), toByteOffset: 12, as: UInt32.self)
                raw.storeBytes(of: UInt32(pageSize), toByteOffset: 16, as: UInt32.self)
                raw.storeBytes(of: dataInode, toByteOffset: 24, as: UInt64.self)
            }
            try fresh.withUnsafeBytes { try file.write($0, at: 0) }
            memory.atomic64(at: LockFile.generationOffset).pointee.store(generation, ordering: .releasing)
            // Downgrade to shared: other handles may now join.
            guard try file.tryLock(offset: LockFile.openHandlesByte, exclusive: false) else {
                throw StrataError.misuse("could not downgrade the lock file's open-handle lock")
            }
            self.file = file
            self.memory = memory
            slotCount = slots
        } else {
            guard headerValid else { throw header.inUseMismatch(path: path) }
            guard try file.tryLock(offset: LockFile.openHandlesByte, exclusive: false) else {
                throw StrataError.misuse("could not join the store's open handles")
            }
            self.file = file
            memory = try SharedMemory(file: file, length: LockFile.byteCount(slots: header.slots))
            slotCount = header.slots
        }
    }

    /// Throws `lockFileReplaced` if another open file description write-locks the data file's
    /// writer byte while nobody has the lock file open: a writer whose lock file was deleted or
    /// replaced. A writer that is exiting releases its two files in no set order, so the lock is
    /// looked at again for up to 100 ms before the open is refused.
    static func refuseIfAWriterHoldsTheDataFile(_ dataFile: PosixFile, lockPath: String) throws {
        for attempt in 0...100 {
            guard try dataFile.isWriteLockedByOthers(offset: LockFile.writerLockByte) else { return }
            if attempt < 100 { usleep(1000) }
        }
        throw StrataError.lockFileReplaced(path: String(lockPath.dropLast("/lock".count)))
    }

    /// A lock file already opened and mapped (see `LockFile+ReadOnly.swift`).
    init(file: PosixFile, memory: SharedMemory, slotCount: Int) {
        self.file = file
        self.memory = memory
        self.slotCount = slotCount
    }

    /// The first 32 bytes of an existing lock file, as found.
    struct Header {
        let bytesRead: Int
        let magic: UInt64
        let version: UInt32
        let slots: Int
        let dataInode: UInt64
        let fileSize: UInt64

        init(of file: PosixFile) throws {
            var header = [UInt8](repeating: 0, count: 32)
            bytesRead = try header.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: 32, at: 0) }
            magic = header.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            version = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self) }
            slots = Int(header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self) })
            dataInode = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 24, as: UInt64.self) }
            fileSize = try file.size()
        }

        func isValid(forDataInode inode: UInt64) -> Bool {
            bytesRead == 32 && magic == LockFile.magic && version == LockFile.formatVersion
                && slots > 0 && slots <= 1 << 16 && dataInode == inode
                && fileSize >= UInt64(LockFile.byteCount(slots: slots))
        }

        /// The error for an invalid header that another handle is using (so it cannot be reset).
        func inUseMismatch(path: String) -> StrataError {
            if magic != LockFile.magic && bytesRead > 0 {
                return StrataError.notAStore(path: path, reason: "the lock file was not written by Strata")
            }
            return StrataError.notAStore(path: path, reason: "the lock file is in use but does not match this data file (format \(version), inode \(dataInode))")
        }
    }

    func close() { file.close() }

    static func slotLockByte(_ slot: Int) -> Int64 { Int64(slotsOffset + slot * slotSize) }
}
