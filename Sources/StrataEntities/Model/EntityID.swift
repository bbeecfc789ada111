import Foundation
import Glibc
import Strata
import Synchronization

/// The identifier of an entity: a UUID, unique across every entity type of a store.
///
/// Identifiers sort by their 16 bytes (the order of `allEntities()` and of entity keys).
public struct EntityID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The UUID that is the identifier.
    public let uuid: UUID

    /// The identifier `uuid`; by default a new random one.
    public init(_ uuid: UUID = UUID()) { self.uuid = uuid }

    /// A new, roughly time-ordered identifier: a UUID of version 7 (RFC 9562), Unix time in
    /// milliseconds in its first 48 bits, then 74 random bits. The store gives one to every entity
    /// it creates without an identifier from the caller (`EntityReference.new`, a get-or-create by
    /// a property).
    ///
    /// Order: within this process, an identifier never sorts before one made in an earlier
    /// millisecond, even if the wall clock steps back (the time used never goes below the last
    /// one used); identifiers made in the same millisecond sort in random order. Across processes
    /// and machines they are as ordered as the clocks. The first 48 bits tell when the entity was
    /// created: use `EntityID()` (random) where that must not be visible.
    ///
    /// Why: an entity's header and history are stored under its identifier, so entities with
    /// random identifiers, created together, land on as many random pages as there are of them,
    /// and a transaction copies and writes each. Identifiers made in the same milliseconds share
    /// their first bytes: what one transaction creates lands on a few adjacent pages.
    public static func timeOrdered() -> EntityID {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let clockMilliseconds = UInt64(max(0, now.tv_sec)) &* 1000 &+ UInt64(max(0, now.tv_nsec)) / 1_000_000
        let milliseconds = lastIssuedMilliseconds.max(clockMilliseconds, ordering: .relaxed).newValue
        // A random (version 4) UUID's 122 random bits, of which its first 48 become the time,
        // and its version nibble 7; the variant bits stay.
        var bytes = UUID().uuid
        withUnsafeMutableBytes(of: &bytes) { raw in
            for index in 0..<6 { raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index))) }
            raw[6] = 0x70 | (raw[6] & 0x0F)
        }
        return EntityID(UUID(uuid: bytes))
    }

    /// The time (Unix milliseconds) of the newest `timeOrdered()` identifier of this process.
    private static let lastIssuedMilliseconds = Atomic<UInt64>(0)

    /// Parses the textual UUID form; nil if `string` is not one.
    public init?(_ string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.uuid = uuid
    }

    /// The UUID's textual form (what `init?(_:)` parses).
    public var description: String { uuid.uuidString }

    /// Hashes the 16 bytes as two words: identifiers key every per-transaction table of the
    /// store (headers, changes, results), and this is cheaper than hashing them as a byte buffer.
    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes(of: uuid.uuid) { raw in
            hasher.combine(raw.loadUnaligned(as: UInt64.self))
            hasher.combine(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
    }

    /// Orders by the UUID's 16 bytes.
    public static func < (lhs: EntityID, rhs: EntityID) -> Bool { lhs.uuid < rhs.uuid }

    /// Decodes a single UUID value.
    public init(from decoder: any Decoder) throws {
        uuid = try decoder.singleValueContainer().decode(UUID.self)
    }

    /// Encodes as a single UUID value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuid)
    }

    /// The 16 raw bytes (the form used in every tree key).
    var bytes: [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }

    /// Reads 16 raw bytes at `offset` of `buffer` (the caller checked the length).
    init(bytes buffer: UnsafeRawBufferPointer, at offset: Int) {
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 16])) }
        uuid = UUID(uuid: raw)
    }
}
