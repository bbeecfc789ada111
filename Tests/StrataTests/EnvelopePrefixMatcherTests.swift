import Foundation
@testable import Strata
import Testing

// Every typed load checks the stored envelope's prefix by words (`EnvelopePrefixMatcher`); these
// pin that the word compare says exactly what a byte compare says, for every prefix length the
// word paths cover (and beyond), every envelope length around it, and a difference at each byte.

@Suite("Envelope prefix matcher")
struct EnvelopePrefixMatcherTests {
    /// What the matcher must answer: the bytes after `prefix` if `envelope` starts with it.
    private func expected(_ prefix: [UInt8], _ envelope: [UInt8]) -> [UInt8]? {
        envelope.starts(with: prefix) ? Array(envelope.dropFirst(prefix.count)) : nil
    }

    private func matched(_ matcher: EnvelopePrefixMatcher, _ envelope: [UInt8]) -> [UInt8]? {
        envelope.withUnsafeBytes { matcher.payload(of: $0).map(Array.init) }
    }

    @Test func agreesWithAByteCompareAtEveryLength() {
        var generator = makeCodingTestGenerator("envelope prefix matcher")
        for prefixCount in 1...20 {
            for _ in 0..<20 {
                let prefix = (0..<prefixCount).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let matcher = EnvelopePrefixMatcher(prefix)
                for extra in 0...12 {
                    let tail = (0..<extra).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    let envelope = prefix + tail
                    #expect(matched(matcher, envelope) == tail)
                    // A difference at any byte of the prefix is a mismatch.
                    for position in 0..<prefixCount {
                        var changed = envelope
                        changed[position] ^= UInt8.random(in: 1...255, using: &generator)
                        #expect(matched(matcher, changed) == nil)
                    }
                }
                // Envelopes shorter than the prefix (its own beginnings) never match.
                for shorter in 0..<prefixCount {
                    #expect(matched(matcher, Array(prefix.prefix(shorter))) == nil)
                }
            }
        }
    }

    @Test func theCurrentPrefixOfAFormatMatchesItsOwnEnvelopes() throws {
        let prefix = InstanceEnvelope.currentPrefix(format: EnvelopeProbeFormat.self)
        let matcher = EnvelopePrefixMatcher(prefix)
        let envelope = try InstanceEnvelope.encode(EnvelopeProbe(id: 7, text: "seven"), format: EnvelopeProbeFormat.self, currentPrefix: prefix)
        #expect(matched(matcher, envelope) == expected(prefix, envelope))
        #expect(matched(matcher, envelope) != nil)
    }
}

private struct EnvelopeProbe: Codable, Identifiable, Sendable {
    var id: Int
    var text: String
}

private struct EnvelopeProbeFormat: DatastoreFormat {
    static let name = "envelope-probes"
    typealias Instance = EnvelopeProbe
    typealias Identifier = Int
}
