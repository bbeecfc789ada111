import Foundation

/// A flag one thread sets and others poll: how an async caller's cancellation reaches work running
/// on a blocking thread.
final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
