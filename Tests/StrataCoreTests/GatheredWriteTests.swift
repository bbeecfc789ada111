import Foundation
import Glibc
import Testing
import StrataTestFixtures
@_spi(Testing) @testable import StrataCore

/// `PosixFile.writeGathered`, the one call every commit's pages go through: buffers written back
/// to back, cut into pieces of at most `writeSpan` bytes, at most `maximumVectors` per call
/// (its vectors live in temporary memory sized from the buffers).
@Suite struct GatheredWriteTests {
    /// Random lists of buffers (a page, a few bytes, a multi-span overflow run; up to several
    /// thousand of them) at random offsets read back exactly as a model of the file says.
    @Test func buffersLandBackToBackAcrossSpansAndVectorLimits() throws {
        var random = SeededGenerator(seed: testSeed("gatheredWrite"))
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let file = try PosixFile(path: directory.path + "/data", flags: O_RDWR | O_CREAT)
        var model: [UInt8] = []
        for round in 0..<40 {
            let count = round % 10 == 9 ? Int.random(in: 1_000...3_000, using: &random) : Int.random(in: 0...12, using: &random)
            // Many buffers: scraps (more than one call's vectors within one span: at most 8 bytes
            // each, so 1,024 of them fill at most half of a 16 KiB span and the vector limit, not
            // the span, ends the call) or pages and scraps; few: also runs longer than a span.
            let scraps = round % 20 == 9 // more buffers than one call takes, inside one span
            let sizes = (0..<count).map { _ in
                if scraps { return Int.random(in: 1...8, using: &random) }
                switch Int.random(in: 0..<10, using: &random) {
                case 0: return Int.random(in: 1...300, using: &random)
                case 1 where count <= 12: return Int.random(in: 65_536...300_000, using: &random)
                default: return 4096
                }
            }
            let offset = UInt64.random(in: 0...(1 << 20), using: &random)
            let seed = random.next()
            let bytes = (0..<sizes.reduce(0, +)).map { UInt8(truncatingIfNeeded: ((UInt64($0) &+ seed) &* 0x9E37_79B9_7F4A_7C15) >> 56) }
            try bytes.withUnsafeBytes { all in
                var buffers: [UnsafeRawBufferPointer] = []
                var start = 0
                for size in sizes {
                    buffers.append(UnsafeRawBufferPointer(rebasing: all[start..<start + size]))
                    start += size
                }
                try file.writeGathered(buffers, at: offset)
            }
            // Writing nothing leaves the file as it was (no growth to `offset`).
            let end = Int(offset) + bytes.count
            if !bytes.isEmpty {
                if model.count < end { model += [UInt8](repeating: 0, count: end - model.count) }
                model.replaceSubrange(Int(offset)..<end, with: bytes)
            }
            #expect(try file.size() == UInt64(model.count), "round \(round)")
            var stored = [UInt8](repeating: 0, count: model.count)
            let read = try stored.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: model.count, at: 0) }
            #expect(read == model.count && stored == model, "round \(round): \(count) buffers at \(offset)")
        }
    }
}
