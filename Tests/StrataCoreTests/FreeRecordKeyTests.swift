import Testing
@testable import StrataCore

/// The free tree's keys are part of the file format: 20 bytes, big-endian (freedBy, writer,
/// chunk), so byte order is numeric order on freedBy first.
@Suite struct FreeRecordKeyTests {
    func bytes(_ key: FreeRecordKey) -> [UInt8] { key.withBytes { Array($0) } }

    @Test func layoutIsBigEndianFreedByWriterChunk() {
        let key = bytes(FreeRecordKey(freedBy: 0x0102_0304_0506_0708, writer: 0x1112_1314_1516_1718, chunk: 0x2122_2324))
        #expect(key == [1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x21, 0x22, 0x23, 0x24])
    }

    @Test func byteOrderIsNumericOrder() {
        let keys: [(UInt64, UInt64, UInt32)] = [(1, 9, 9), (2, 0, 0), (2, 0, 1), (2, 1, 0), (256, 0, 0), (.max, .max, .max)]
        for (earlier, later) in zip(keys, keys.dropFirst()) {
            let a = bytes(FreeRecordKey(freedBy: earlier.0, writer: earlier.1, chunk: earlier.2))
            let b = bytes(FreeRecordKey(freedBy: later.0, writer: later.1, chunk: later.2))
            #expect(a.lexicographicallyPrecedes(b), "\(earlier) < \(later)")
        }
    }
}
