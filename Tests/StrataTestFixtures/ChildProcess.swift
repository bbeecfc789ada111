import Foundation
import Synchronization

/// A real child process running `strata-child` (or another of the package's executables), with
/// line-based stdin/stdout.
public final class ChildProcess: @unchecked Sendable {
    public let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private struct Received { var partial = Data(); var lines: [String] = []; var ended = false }
    private final class Inbox: Sendable { let state = Mutex(Received()) }
    private let inbox = Inbox()
    private var consumed = 0

    public init(_ arguments: [String], executable: String = "strata-child") throws {
        process.executableURL = URL(fileURLWithPath: builtExecutable(executable))
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let inbox = self.inbox
        try process.run()
        PipeReader.start(output.fileHandleForReading, received: { chunk in
            inbox.state.withLock { state in
                state.partial.append(chunk)
                while let newline = state.partial.firstIndex(of: 0x0A) {
                    state.lines.append(String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self))
                    state.partial.removeSubrange(state.partial.startIndex...newline)
                }
            }
        }, ended: { inbox.state.withLock { $0.ended = true } })
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    public var pid: Int32 { process.processIdentifier }

    /// The next line from the child, waiting up to `timeout` seconds.
    public func nextLine(timeout: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let index = consumed
            let line: String? = inbox.state.withLock { $0.lines.count > index ? $0.lines[index] : nil }
            if let line {
                consumed += 1
                return line
            }
            usleep(1000)
        }
        return nil
    }

    /// Every line received so far, without consuming.
    public var allLines: [String] { inbox.state.withLock { $0.lines } }

    /// Skips lines until one starts with `prefix`; returns it.
    public func waitFor(_ prefix: String, timeout: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let line = nextLine(timeout: deadline.timeIntervalSinceNow) else { return nil }
            if line.hasPrefix(prefix) { return line }
            if line.hasPrefix("error") { return line }
        }
        return nil
    }

    /// Writes `line` to the child's stdin. A child that already died (a killed one, or one that
    /// failed) is not an error here: the test learns of it from the child's output and exit status.
    public func send(_ line: String) {
        _ = ChildProcess.pipeSignalIgnored
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Writing to a pipe whose reader is gone raises SIGPIPE, which would kill the test process;
    /// ignored once per process, the write fails with EPIPE instead.
    private static let pipeSignalIgnored: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()

    /// Kills the child and waits until everything it wrote before dying has been read, so
    /// `allLines` holds every line it acknowledged.
    public func killHard() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let deadline = Date().addingTimeInterval(5)
        while !inbox.state.withLock({ $0.ended }) && Date() < deadline { usleep(1000) }
    }

    /// Waits for the child to exit and for everything it wrote to have been read (`allLines`
    /// then holds its last line too: the pipe is drained on another thread).
    @discardableResult
    public func waitForExit(timeout: Double = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(2000) }
        guard !process.isRunning else { return nil }
        let drained = Date().addingTimeInterval(5)
        while !inbox.state.withLock({ $0.ended }) && Date() < drained { usleep(1000) }
        return process.terminationStatus
    }
}
