import Foundation

/// An instance as stored, before decoding: what a migration receives.
///
/// Stored bytes are an envelope: one coding tag (1 binary, 2 JSON), the version's raw value in the
/// order-preserving key encoding (self-delimiting), then the payload.
public struct StoredInstance: @unchecked Sendable {
    /// The encoded payload (binary or JSON, per `coding`).
    public let payload: Data
    public let coding: InstanceCoding

    /// Decodes the payload as `type` (an older version's shape, in a migration).
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try payload.withUnsafeBytes { try InstanceEnvelope.decodePayload(type, from: $0, coding: coding) }
    }
}

enum InstanceEnvelope {
    static let binaryTag: UInt8 = 1
    static let jsonTag: UInt8 = 2

    /// What every envelope written by the current code starts with: the coding tag and the
    /// current version. The version's key encoding is canonical and self-delimiting, so an
    /// envelope starting with these bytes holds exactly the current version in this coding.
    static func currentPrefix<F: DatastoreFormat>(format: F.Type) -> [UInt8] {
        var writer = OrderedKeyWriter(reservingCapacity: 64)
        writer.writeByte(F.coding == .binary ? binaryTag : jsonTag)
        writer.write(F.currentVersion.rawValue)
        return writer.bytes
    }

    /// The envelope of `instance`; `currentPrefix` is `currentPrefix(format:)`, computed once
    /// per datastore.
    static func encode<F: DatastoreFormat>(_ instance: F.Instance, format: F.Type, currentPrefix: [UInt8]) throws -> [UInt8] {
        switch F.coding {
        case .binary: return try BinaryInstanceEncoder().encode(instance, after: currentPrefix)
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            return currentPrefix + (try encoder.encode(instance))
        }
    }

    /// `encode`, into `output` (replacing its bytes, reusing its storage).
    static func encode<F: DatastoreFormat>(_ instance: F.Instance, format: F.Type, currentPrefix: [UInt8], into output: inout [UInt8]) throws {
        switch F.coding {
        case .binary: try BinaryInstanceEncoder().encode(instance, after: currentPrefix, into: &output)
        case .json: output = try encode(instance, format: F.self, currentPrefix: currentPrefix)
        }
    }

    static func decodePayload<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer, coding: InstanceCoding) throws -> T {
        switch coding {
        case .binary: return try BinaryInstanceDecoder().decode(type, from: bytes)
        case .json: return try JSONDecoder().decode(type, from: Data(bytes))
        }
    }

    /// Decodes an envelope; `currentPrefix` matches `currentPrefix(format:)`, built once per
    /// datastore. The common case (written by the current version) skips reading the version
    /// generically, which costs runtime metadata lookups on every call. (The most common one,
    /// binary without field evolution, `DatastoreSchema.decode` hands to the decoder itself.)
    static func decode<F: DatastoreFormat>(_ bytes: UnsafeRawBufferPointer, format: F.Type, currentPrefix: EnvelopePrefixMatcher) throws -> F.Instance {
        guard let payload = currentPrefix.payload(of: bytes) else { return try decode(bytes, format: F.self) }
        return try decodeCurrent(F.self, from: payload, coding: F.coding)
    }

    /// Decodes an envelope, migrating older versions and refusing newer ones.
    static func decode<F: DatastoreFormat>(_ bytes: UnsafeRawBufferPointer, format: F.Type) throws -> F.Instance {
        var reader = OrderedKeyReader(bytes)
        let coding: InstanceCoding
        let rawVersion: F.Version.RawValue
        do {
            switch try reader.readByte() {
            case binaryTag: coding = .binary
            case jsonTag: coding = .json
            case let tag: throw EnvelopeDamage(reason: "unknown coding tag \(tag)")
            }
            rawVersion = try reader.read(F.Version.RawValue.self)
        } catch let error as EnvelopeDamage {
            throw error
        } catch {
            throw EnvelopeDamage(reason: "\(error)")
        }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[reader.offset...])
        if rawVersion == F.currentVersion.rawValue {
            return try decodeCurrent(F.self, from: payload, coding: coding)
        }
        guard let version = F.Version(rawValue: rawVersion) else {
            let newest = F.Version.allCases.map(\.rawValue).max() ?? F.currentVersion.rawValue
            if rawVersion > newest {
                throw DatastoreError.versionTooNew(datastore: F.name, stored: "\(rawVersion)", newestKnown: "\(newest)")
            }
            throw DatastoreError.unknownVersion(datastore: F.name, stored: "\(rawVersion)")
        }
        if version.rawValue > F.currentVersion.rawValue {
            throw DatastoreError.versionTooNew(datastore: F.name, stored: "\(rawVersion)", newestKnown: "\(F.currentVersion.rawValue)")
        }
        return try F.migrate(StoredInstance(payload: Data(payload), coding: coding), from: version)
    }

    /// The stored version's raw value (for bulk migration), without decoding the payload.
    static func storedVersion<F: DatastoreFormat>(_ bytes: UnsafeRawBufferPointer, format: F.Type) throws -> F.Version.RawValue {
        var reader = OrderedKeyReader(bytes)
        _ = try reader.readByte()
        return try reader.read(F.Version.RawValue.self)
    }
}
