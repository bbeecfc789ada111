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
}
