import Foundation

/// Drains a pipe on a thread of its own with blocking reads, until end of file.
///
/// Why not `FileHandle.readabilityHandler`: on Linux it is a dispatch read source, and clearing it
/// cancels the source asynchronously while the pipe's descriptor can be closed (the `Pipe` freed)
/// at once. Under the crash campaign's churn of hundreds of children, libdispatch's event loop
/// then met a descriptor it no longer owned and crashed the test process (SIGSEGV in
/// `_dispatch_event_loop_drain`, seen once in a long fault run). Here the thread owns the handle:
/// the descriptor is closed only after the last read returned.
public enum PipeReader {
    /// Starts reading `handle`; `received` gets each chunk, `ended` is called once at end of file
    /// (or on a read error), both on the reading thread.
    public static func start(_ handle: FileHandle, received: @escaping @Sendable (Data) -> Void,
                             ended: @escaping @Sendable () -> Void) {
        let descriptor = handle.fileDescriptor
        let thread = Thread { [handle] in
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                received(Data(buffer[0..<count]))
            }
            withExtendedLifetime(handle) {}
            ended()
        }
        thread.start()
    }
}
