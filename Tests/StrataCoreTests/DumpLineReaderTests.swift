import Foundation
import Glibc
import StrataTestFixtures
import Testing
@testable import StrataCore

/// The dump line reader refuses a line longer than any dump entry can be with `invalidLine`
/// (found in review: its buffer doubled for as long as no newline came, so a huge input without
/// one allocated until the process ran out of memory). The limit is a parameter here: the real
/// one is gigabytes.
@Suite struct DumpLineReaderTests {
    /// A reader of `text` (through a pipe) whose lines may have at most `limit` bytes.
    private func reader(_ text: String, limit: Int, _ body: (DumpLineReader) throws -> Void) throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let bytes = Array(text.utf8)
        #expect(bytes.count < 60_000)   // fits in the pipe's buffer: written before reading
        let written = bytes.withUnsafeBytes { Glibc.write(ends[1], $0.baseAddress, $0.count) }
        close(ends[1])
        #expect(written == bytes.count)
        try body(DumpLineReader(descriptor: ends[0], path: "input", maximumLineLength: limit))
    }

    @Test func linesUpToTheLimitAreRead() throws {
        let long = String(repeating: "a", count: 5_000)
        try reader("short\n" + long + "\n" + long, limit: 5_000) { lines in
            let first = try lines.nextLine { String(decoding: $0, as: UTF8.self) }
            #expect(first == "short")
            var lengths: [Int] = []
            while let length = try lines.nextLine({ $0.count }) { lengths.append(length) }
            #expect(lengths == [5_000, 5_000])
        }
    }

    /// A line of exactly the limit ending in CRLF is read like one ending in LF (found in review:
    /// the buffer had room for the line and one terminator byte, so the CR filled it and the
    /// line was refused as too long); one byte more is still refused.
    @Test func aLineOfTheLimitEndingInCRLFIsRead() throws {
        let long = String(repeating: "c", count: 5_000)
        try reader("short\r\n" + long + "\r\n" + long + "\r\nend", limit: 5_000) { lines in
            var lengths: [Int] = []
            while let length = try lines.nextLine({ $0.count }) { lengths.append(length) }
            #expect(lengths == [5, 5_000, 5_000, 3])
        }
        try reader(long + "c\r\n", limit: 5_000) { lines in
            #expect(throws: DumpError.self) {
                while try lines.nextLine({ $0.count }) != nil {}
            }
        }
    }

    @Test func aLineLongerThanTheLimitIsInvalid() throws {
        for text in ["short\n" + String(repeating: "a", count: 5_001) + "\nmore\n",
                     String(repeating: "b", count: 50_000)] {
            try reader(text, limit: 5_000) { lines in
                #expect(throws: DumpError.self) {
                    while try lines.nextLine({ $0.count }) != nil {}
                }
            }
        }
    }
}
