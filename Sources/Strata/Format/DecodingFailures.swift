import StrataCore

/// A stored envelope's header is damaged (the caller names the instance, see `DatastoreSchema.decode`).
struct EnvelopeDamage: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Errors the typed layer lets through unchanged (a `RenameError` says the format's declared
/// renames do not fit a stored instance: the declaration is at fault, not the bytes); any other
/// error out of a decoder means the stored bytes are damaged, and is reported as a
/// `DatastoreError` naming what was being read.
func isTypedFailure(_ error: any Error) -> Bool {
    error is DatastoreError || error is StrataError || error is CancellationError || error is RenameError
}

extension DatastoreSchema {
    /// Decodes the stored instance whose identifier is `idBytes` (evaluated only on failure):
    /// damaged bytes become `DatastoreError.corruptInstance` naming the datastore and identifier.
    func decode(_ envelope: ByteView, id idBytes: @autoclosure () throws -> [UInt8]) throws -> F.Instance {
        do {
            return try decode(envelope)
        } catch where !isTypedFailure(error) {
            throw corruptInstance(id: try? idBytes(), error)
        }
    }

    /// `decode(_:id:)` of an envelope lent in place (valid during the call).
    func decode(bytes envelope: UnsafeRawBufferPointer, id idBytes: @autoclosure () throws -> [UInt8]) throws -> F.Instance {
        do {
            return try decode(bytes: envelope)
        } catch where !isTypedFailure(error) {
            throw corruptInstance(id: try? idBytes(), error)
        }
    }

    /// Decodes an envelope copied out of the store (the same reporting as `decode(_:id:)`).
    func decode(copied envelope: [UInt8], id idBytes: [UInt8]) throws -> F.Instance {
        do {
            return try envelope.withUnsafeBytes { try InstanceEnvelope.decode($0, format: F.self) }
        } catch where !isTypedFailure(error) {
            throw corruptInstance(id: idBytes, error)
        }
    }

    func corruptInstance(id idBytes: [UInt8]?, _ error: any Error) -> DatastoreError {
        .corruptInstance(datastore: F.name, id: idBytes.map(describeIdentifier) ?? "(unknown)", reason: "\(error)")
    }

    /// An identifier for messages: decoded if it can be, else its bytes in hex.
    func describeIdentifier(_ bytes: [UInt8]) -> String {
        if let id = try? F.Identifier(orderedKeyBytes: bytes) { return "\(id)" }
        return hexBytes(bytes)
    }
}

/// Up to 32 bytes in hex, for values that cannot be decoded.
func hexBytes(_ bytes: [UInt8]) -> String {
    "0x" + bytes.prefix(32).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + (bytes.count > 32 ? "..." : "")
}
