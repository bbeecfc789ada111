import Foundation
import Strata
import Testing

@Suite("Binary coder round trips")
struct BinaryCodingRoundTripTests {
    private let encoder = BinaryInstanceEncoder()
    private let decoder = BinaryInstanceDecoder()

    private func roundTrip<T: Codable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = try encoder.encode(value)
        let decoded = try decoder.decode(T.self, from: bytes)
        #expect(decoded == value, sourceLocation: sourceLocation)
    }

    @Test func richModel() throws {
        try roundTrip(ModelLibrary.sample())
    }

    @Test func topLevelValues() throws {
        try roundTrip(42)
        try roundTrip(-42 as Int8)
        try roundTrip(UInt64.max)
        try roundTrip("hello, world")
        try roundTrip("")
        try roundTrip(3.25)
        try roundTrip(Float(-0.5))
        try roundTrip(true)
        try roundTrip(Int?.none)
        try roundTrip(Int?.some(0))
        try roundTrip([1, 2, 3])
        try roundTrip([String]())
        try roundTrip(Date(timeIntervalSinceReferenceDate: -1234.5678))
        try roundTrip(UUID())
        try roundTrip(Data())
        try roundTrip(Data((0...255).map { UInt8($0) }))
        try roundTrip(["b": 2, "a": 1])
        try roundTrip(Set([3, 1, 2]))
        try roundTrip([[String?]]([["x", nil], [], [nil]]))
        try roundTrip(ModelEmpty())
        try roundTrip(ModelCount(-9))
        try roundTrip(ModelEvent.moved(1, shelf: nil))
        try roundTrip(URL(fileURLWithPath: "/tmp/x y"))
        try roundTrip(Decimal(string: "-0.000123")!)
        try roundTrip([Int128.min, -1, 0, .max])
        try roundTrip(UInt128.max)
    }

    @Test func bitExactFloatingPoint() throws {
        let values = [Double.nan, -0.0, .infinity, -.greatestFiniteMagnitude, .leastNonzeroMagnitude]
        let decoded = try decoder.decode([Double].self, from: encoder.encode(values))
        #expect(decoded.map(\.bitPattern) == values.map(\.bitPattern))
    }

    @Test func largeValuesUseMultiByteLengths() throws {
        let big = (0..<5000).map { "item \($0)" }
        try roundTrip(big)
        try roundTrip(String(repeating: "x", count: 100_000))
        let wide = Dictionary(uniqueKeysWithValues: (0..<300).map { ("key\($0)", $0) })
        try roundTrip(wide)
    }

    @Test func compactForms() throws {
        #expect(try encoder.encode(Date(timeIntervalSinceReferenceDate: 1)).count == 8)
        #expect(try encoder.encode(UUID()).count == 16)
        #expect(try encoder.encode(Data([1, 2, 3])) == [3, 1, 2, 3])
        #expect(try encoder.encode(-1) == [1])  // ZigZag
        #expect(try encoder.encode("hi") == [2, 0x68, 0x69])
        #expect(try encoder.encode(Int?.none) == [])
    }

    @Test func codableFormsOfSpecialTypesAreStillRead() throws {
        // A wrapper that bypasses the generic entry point writes UUID/Data in their own
        // Codable forms; reading them back as UUID/Data must still work.
        struct Raw<Wrapped: Codable>: Codable {
            var value: Wrapped
            init(_ value: Wrapped) { self.value = value }
            init(from decoder: any Decoder) throws { value = try Wrapped(from: decoder) }
            func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
        }
        let uuid = UUID()
        #expect(try decoder.decode(UUID.self, from: encoder.encode(Raw(uuid))) == uuid)
        let data = Data([9, 0, 200])
        #expect(try decoder.decode(Data.self, from: encoder.encode(Raw(data))) == data)
        #expect(try decoder.decode([Data].self, from: encoder.encode([Raw(data), Raw(Data())])) == [data, Data()])
    }

    @Test func decodesFromAnOffsetInsideALargerBuffer() throws {
        let library = ModelLibrary.sample()
        let page = [UInt8](repeating: 0xAB, count: 37) + (try encoder.encode(library)) + [UInt8](repeating: 0xCD, count: 11)
        let decoded = try page.withUnsafeBytes { buffer in
            try decoder.decode(ModelLibrary.self, from: UnsafeRawBufferPointer(rebasing: buffer[37..<(buffer.count - 11)]))
        }
        #expect(decoded == library)
    }

    @Test func interleavedContainerUseIsRejected() {
        struct Interleaved: Encodable {
            enum Keys: String, CodingKey { case a, b }
            func encode(to encoder: any Encoder) throws {
                var outer = encoder.container(keyedBy: Keys.self)
                var inner = outer.nestedContainer(keyedBy: Keys.self, forKey: .a)
                try outer.encode(1, forKey: .b)
                try inner.encode(2, forKey: .a)  // inner was closed by the write above
            }
        }
        #expect(throws: EncodingError.self) { _ = try encoder.encode(Interleaved()) }
    }
}
