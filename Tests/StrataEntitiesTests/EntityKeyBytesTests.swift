import Foundation
import Strata
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// The entity write paths build keys with `EntityKeyBytes`; they must be byte for byte what the
/// ordered-key coder writes, or keys written one way would not be found the other.
@Suite struct EntityKeyBytesTests {
    @Test func datestampsMatchTheOrderedKeyWriter() {
        let seed = testSeed("datestampsMatchTheOrderedKeyWriter")
        var random = SeededGenerator(seed: seed)
        var intervals: [Double] = [0, -0.0, 1, -1, .infinity, -.infinity, .nan, -.nan, .greatestFiniteMagnitude, -.leastNonzeroMagnitude,
                                   Date.distantPast.timeIntervalSinceReferenceDate, Date.distantFuture.timeIntervalSinceReferenceDate,
                                   Double(bitPattern: 0x7FF8_0000_0000_0001)]
        for _ in 0..<2000 { intervals.append(Double(bitPattern: random.next())) }
        for interval in intervals {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            var writer = OrderedKeyWriter()
            writer.write(date)
            var bytes: [UInt8] = []
            bytes.appendOrderedDate(date)
            #expect(bytes == writer.bytes, "[datestampsMatchTheOrderedKeyWriter] seed \(seed): \(interval)")
        }
    }

    @Test func identifiersAndIntegersAreTheirRawBytes() {
        let id = EntityID()
        var writer = OrderedKeyWriter()
        writer.write(id.uuid)
        writer.writeBigEndian(UInt64(0x0102_0304_0506_0708))
        writer.writeBigEndian(UInt32(0x0A0B_0C0D))
        var bytes: [UInt8] = []
        bytes.appendID(id)
        bytes.appendBigEndian(UInt64(0x0102_0304_0506_0708))
        bytes.appendBigEndian(UInt32(0x0A0B_0C0D))
        #expect(bytes == writer.bytes)
        #expect(bytes.count == 28)
    }

    @Test func fixedWidthReadsAgreeWithTheOrderedKeyReader() throws {
        let seed = testSeed("fixedWidthReadsAgreeWithTheOrderedKeyReader")
        var random = SeededGenerator(seed: seed)
        var words: [UInt64] = [0, 1 << 63, ~0, (1 << 63) - 1, 0x7FF8_0000_0000_0000, 0x8000_0000_0000_0000 ^ 0x7FF8_0000_0000_0000,
                               0x7FFF_FFFF_FFFF_FFFF, 0x7FF7_FFFF_FFFF_FFFE, 0x0007_FFFF_FFFF_FFFF]
        for _ in 0..<4000 { words.append(random.next()) }
        for word in words {
            let bytes = withUnsafeBytes(of: word.bigEndian) { Array($0) }
            var dateReader = OrderedKeyReader(bytes)
            let expectedDate = try? dateReader.read(Date.self)
            let date = bytes.withUnsafeBytes { try? EntityFixedWidth.orderedDate($0, at: 0) }
            #expect(date == expectedDate || (date.map { $0.timeIntervalSinceReferenceDate.isNaN } == true && expectedDate.map { $0.timeIntervalSinceReferenceDate.isNaN } == true),
                    "[fixedWidthReadsAgreeWithTheOrderedKeyReader] seed \(seed): \(word)")
            #expect((date == nil) == (expectedDate == nil), "seed \(seed): \(word)")
            var intReader = OrderedKeyReader(bytes)
            #expect(bytes.withUnsafeBytes { EntityFixedWidth.orderedInt($0, at: 0) } == (try intReader.read(Int.self)), "seed \(seed): \(word)")
        }
    }

    /// A header writes a plain ASCII type label as its bytes and terminator, anything else through
    /// the ordered-key writer: either way the bytes are the writer's and the label reads back.
    @Test func headerTypeLabelsAreTheOrderedEncoding() throws {
        for label in ["item", "Person 2", "\u{7F}~", "é", "e\u{301}", "a\u{0}b", "日本", String(repeating: "x", count: 40)] {
            let header = RecordHeader(isDeleted: false, created: Date(timeIntervalSinceReferenceDate: 1), modified: Date(timeIntervalSinceReferenceDate: 2),
                                      sequence: 7, type: label)
            let bytes = header.encoded()
            var writer = OrderedKeyWriter()
            writer.write(label)
            // Status, two datestamps and the creation sequence come first.
            #expect(Array(bytes[25...]) == writer.bytes, "\(label.unicodeScalars.map(\.value))")
            let decoded = try bytes.withUnsafeBytes { try RecordHeader($0) }
            #expect(decoded == header)
        }
    }
}
