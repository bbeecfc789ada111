import Glibc

/// Every write, sync and resize of the data file goes through this seam. Production uses
/// `PosixFile`; fault-injection tests substitute doubles that fail with `ENOSPC`/`EIO`, write short,
/// or remember unsynced writes to simulate a power loss. Reads never come through here: they come
/// from the shared mapping.
///
/// Test-only API (`import @_spi(Testing) StrataCore`): not part of the stable surface.
@_spi(Testing)
public protocol DataFileIO: AnyObject, Sendable {
    /// The data file's path (for error messages).
    var path: String { get }
    /// Writes the buffers back to back starting at `offset` (one gathered write where possible).
    func writeGathered(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws
    func syncData() throws
    func setSize(_ size: UInt64) throws
    func size() throws -> UInt64
}

/// Test doubles tell the two kinds of commit write apart by length: a meta write (or the wipe of
/// one) is always shorter than the smallest page, every page write is whole pages.
@_spi(Testing)
public func isMetaWrite(byteCount: Int) -> Bool { byteCount < PageLayout.minimumPageSize }

extension PosixFile: DataFileIO {
    /// The most one write call covers. The page cache sizes the folio it creates for a range by
    /// the write that first fills it (never larger than that write, nor than the alignment of the
    /// page it starts at), and every later write into a folio pays for the whole folio (ext4 walks
    /// all of its blocks): a commit of many pages written in one call would make each later
    /// single-page commit to that range several times slower (measured: 4 KiB writes into 1 MiB
    /// folios ~7 us, into 64 KiB folios ~2.4 us). Random commits (free pages scattered over the
    /// file: `mixed`, `fillrandom`) write mostly single pages into folios an earlier bulk commit
    /// created, so the span is 16 KiB, not 64: CPU time of a random 4 KiB `pwrite` into a Strata
    /// `fillrandom` store built with 16 KiB calls ~1.5 us, with 64 KiB calls ~2.1-3.0 us; a fresh
    /// page costs ~0.45 us more to write in 16 KiB calls (~1.46 against ~1.0 us,
    /// `CLOCK_THREAD_CPUTIME_ID` over 100 MiB), ~3% of a `fillseq` put.
    static let writeSpan: UInt64 = 16 * 1024

    @_spi(Testing) public func writeGathered(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        // Buffers are cut into pieces of `writeSpan` bytes counted from `offset` (not at multiples
        // of it in the file: a run no longer than a span, a small commit's usual run, then always
        // goes out in one call); each piece goes out in one pwritev (at most `maximumVectors`
        // buffers per call). The vectors live in temporary (stack) memory: an array per call was
        // ~700 instructions of each of a small commit's few writes.
        var bytes = 0
        for buffer in buffers { bytes += buffer.count }
        let pieces = min(PosixFile.maximumVectors, buffers.count + bytes / Int(PosixFile.writeSpan) + 1)
        try withUnsafeTemporaryAllocation(of: iovec.self, capacity: pieces) { vectors in
            var used = 0
            var pieceStart = offset
            var pieceBytes = 0
            let span = Int(PosixFile.writeSpan)
            for buffer in buffers {
                var rest = buffer
                while !rest.isEmpty {
                    let take = min(rest.count, span - pieceBytes)
                    vectors[used] = iovec(iov_base: UnsafeMutableRawPointer(mutating: rest.baseAddress), iov_len: take)
                    used += 1
                    rest = UnsafeRawBufferPointer(rebasing: rest[take...])
                    pieceBytes += take
                    if pieceBytes == span || used == vectors.count {
                        try writeVectors(UnsafeMutableBufferPointer(rebasing: vectors[0..<used]), at: pieceStart)
                        used = 0
                        pieceStart += UInt64(pieceBytes)
                        pieceBytes = 0
                    }
                }
            }
            if used > 0 { try writeVectors(UnsafeMutableBufferPointer(rebasing: vectors[0..<used]), at: pieceStart) }
        }
    }

    /// The most buffers one pwritev takes here (Linux's IOV_MAX).
    static let maximumVectors = 1024

    /// Writes `vectors` back to back at `offset`; a short write is finished buffer by buffer.
    private func writeVectors(_ vectors: UnsafeMutableBufferPointer<iovec>, at offset: UInt64) throws {
        if vectors.count == 1 {
            return try write(UnsafeRawBufferPointer(start: vectors[0].iov_base, count: vectors[0].iov_len), at: offset)
        }
        let total = vectors.reduce(0) { $0 + $1.iov_len }
        var written = -1
        while true {
            written = pwritev(descriptor, vectors.baseAddress, Int32(vectors.count), off_t(offset))
            if written < 0 && errno == EINTR { continue }
            break
        }
        if written < 0 { throw PosixFile.error("pwritev", path) }
        guard written < total else { return }
        var skip = written
        var position = offset + UInt64(written)
        for vector in vectors {
            if skip >= vector.iov_len { skip -= vector.iov_len; continue }
            let rest = UnsafeRawBufferPointer(start: vector.iov_base! + skip, count: vector.iov_len - skip)
            try write(rest, at: position)
            position += UInt64(rest.count)
            skip = 0
        }
    }
}
