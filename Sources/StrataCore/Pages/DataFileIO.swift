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

extension PosixFile: DataFileIO {
    @_spi(Testing) public func writeGathered(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        if buffers.count == 1 { return try write(buffers[0], at: offset) }
        var position = offset
        var index = 0
        // pwritev takes at most IOV_MAX (1024) buffers and may write short; finish with pwrite.
        while index < buffers.count {
            let batch = Array(buffers[index..<min(buffers.count, index + 1024)])
            let total = batch.reduce(0) { $0 + $1.count }
            var vectors = batch.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
            var written = -1
            while true {
                written = pwritev(descriptor, &vectors, Int32(vectors.count), off_t(position))
                if written < 0 && errno == EINTR { continue }
                break
            }
            if written < 0 { throw PosixFile.error("pwritev", path) }
            if written < total {
                // Short write: write the remainder buffer by buffer.
                var skip = written
                for buffer in batch {
                    if skip >= buffer.count { skip -= buffer.count; continue }
                    let rest = UnsafeRawBufferPointer(rebasing: buffer[skip...])
                    try write(rest, at: position + UInt64(written))
                    written += rest.count
                    skip = 0
                }
            }
            position += UInt64(total)
            index += batch.count
        }
    }
}
