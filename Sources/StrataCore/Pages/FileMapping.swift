import Glibc
import Synchronization

/// The read-only shared mapping of the data file.
///
/// A large virtual range is reserved once (`PROT_READ`, `MAP_SHARED`) so the file can grow under it
/// without remapping: bytes the writer appends become readable in place. If the file outgrows the
/// reservation, a new, larger mapping is added; old ones stay mapped until the handle closes, so a
/// read transaction that started on an old mapping keeps valid pointers. Readers never touch bytes
/// at or past `pageCount * pageSize` of their snapshot, and the writer extends the file before it
/// publishes a meta that names more pages, so no access ever lands past the end of file (`SIGBUS`).
final class FileMapping: @unchecked Sendable {
    private struct Region {
        var base: UnsafeRawPointer
        var length: Int
    }

    private let descriptor: Int32
    private let path: String
    private static let maximumRegions = 48
    /// Published regions; an entry is written once, before `regionCount` is incremented (release).
    private let regions: UnsafeMutablePointer<Region>
    private let regionCount = Atomic<Int>(0)
    private let growLock = Mutex<Void>(())

    static let defaultReservation = 16 << 30

    init(file: PosixFile, minimumLength: Int) throws {
        descriptor = file.descriptor
        path = file.path
        regions = .allocate(capacity: FileMapping.maximumRegions)
        try addRegion(length: max(FileMapping.defaultReservation, try reservation(covering: minimumLength)))
    }

    deinit {
        for index in 0..<regionCount.load(ordering: .acquiring) {
            munmap(UnsafeMutableRawPointer(mutating: regions[index].base), regions[index].length)
        }
        regions.deallocate()
    }

    /// A new mapping's length for `length` bytes: twice as many, in whole GiB, so the file can
    /// grow under it. Checked: a sparse data file past 2^62 bytes (or a length a forged meta
    /// named) would overflow; no mapping can be that large, so it is a typed error (EFBIG).
    func reservation(covering length: Int) throws -> Int {
        let granule = 1 << 30
        let (doubled, overflowed) = length.multipliedReportingOverflow(by: 2)
        let (padded, paddingOverflowed) = doubled.addingReportingOverflow(granule - 1)
        guard length >= 0, !overflowed, !paddingOverflowed else {
            throw StrataError.io(operation: "mmap of \(length) bytes", path: path, errno: EFBIG)
        }
        return padded & ~(granule - 1)
    }

    private func addRegion(length: Int) throws {
        let count = regionCount.load(ordering: .relaxed)
        guard count < FileMapping.maximumRegions else { throw StrataError.misuse("the data file outgrew every mapping of \(path)") }
        guard let address = mmap(nil, length, PROT_READ, MAP_SHARED, descriptor, 0), address != MAP_FAILED else {
            throw PosixFile.error("mmap", path)
        }
        (regions + count).initialize(to: Region(base: UnsafeRawPointer(address), length: length))
        regionCount.store(count + 1, ordering: .releasing)
    }

    /// The newest mapping's base address, covering at least `length` bytes (growing if needed).
    @inline(__always)
    func base(covering length: Int) throws -> UnsafeRawPointer {
        let count = regionCount.load(ordering: .acquiring)
        let region = regions[count - 1]
        if length <= region.length { return region.base }
        return try growLock.withLock { _ in
            let newest = regions[regionCount.load(ordering: .acquiring) - 1]
            if length <= newest.length { return newest.base }
            try addRegion(length: try reservation(covering: length))
            return regions[regionCount.load(ordering: .acquiring) - 1].base
        }
    }
}
