import Foundation

/// Changes to an instance's stored fields that need no new version: fields renamed (old key →
/// new key) and defaults for fields that older instances lack. Declared by a format as
/// `static let fieldEvolution`; the binary and the JSON decoder both honour it.
///
/// ```swift
/// struct BookFormat: DatastoreFormat {
///     …
///     static let fieldEvolution: FieldEvolution? = FieldEvolution(
///         renamed: ["writer": "author"],          // instances stored with "writer" read it as "author"
///         defaults: ["rating": 0])                // instances without "rating" read 0
/// }
/// ```
///
/// It applies to the instance's own (top-level) fields of instances stored with the current
/// version; older versions go through `migrate(_:from:)` as before. Instances are written with the
/// new keys, so renames and defaults cost nothing once every instance has been rewritten. An
/// instance holding both a renamed field's old and new key throws `RenameError.fieldCollision`;
/// a declaration that maps two keys to one, renames onto a key that is itself renamed, or gives
/// a default for an old key throws `RenameError.conflictingFieldRenames` when the datastore opens.
public struct FieldEvolution: Sendable {
    /// Old key → new key.
    public let renamed: [String: String]
    /// Key → the value a missing field reads as (of the field's type: `0` for an `Int`, `""`…).
    public let defaults: [String: any Encodable & Sendable]

    public init(renamed: [String: String] = [:], defaults: [String: any Encodable & Sendable] = [:]) {
        self.renamed = renamed
        self.defaults = defaults
    }

    /// Checks the declaration (see the type's documentation).
    func validate(datastore: String) throws {
        var targets: [String: String] = [:]
        for (old, new) in renamed.sorted(by: { $0.key < $1.key }) {
            if old == new { throw RenameError.conflictingFieldRenames(datastore: datastore, reason: "'\(old)' is renamed to itself") }
            if let other = targets[new] {
                throw RenameError.conflictingFieldRenames(datastore: datastore, reason: "'\(other)' and '\(old)' are both renamed to '\(new)'")
            }
            targets[new] = old
            if renamed[new] != nil {
                throw RenameError.conflictingFieldRenames(datastore: datastore, reason: "'\(old)' is renamed to '\(new)', which is itself renamed")
            }
            if defaults[old] != nil {
                throw RenameError.conflictingFieldRenames(datastore: datastore, reason: "a default is given for '\(old)', a key renamed to '\(new)'")
            }
        }
    }

    /// Decodes a current-version payload with the renames and defaults applied.
    func decode<T: Decodable>(_ type: T.Type, from payload: UnsafeRawBufferPointer, coding: InstanceCoding, datastore: String) throws -> T {
        switch coding {
        case .binary:
            guard let rewritten = try rewriteBinary(payload, datastore: datastore) else {
                return try BinaryInstanceDecoder().decode(type, from: payload)
            }
            return try BinaryInstanceDecoder().decode(type, from: rewritten)
        case .json:
            return try JSONDecoder().decode(type, from: try rewriteJSON(Data(payload), datastore: datastore))
        }
    }

    /// The keys a stored instance ends up with, in order, or a collision.
    private func renamedKeys(_ stored: [String], datastore: String) throws -> [String] {
        let present = Set(stored)
        return try stored.map { key in
            guard let new = renamed[key] else { return key }
            if present.contains(new) { throw RenameError.fieldCollision(datastore: datastore, oldKey: key, newKey: new) }
            return new
        }
    }

    /// The top-level keyed container (`[count]` then `[key len][key][value len][value]`…) with
    /// keys renamed and defaults appended; nil when nothing changes (or it is not a keyed
    /// container: the decoder then reports what is wrong).
    private func rewriteBinary(_ payload: UnsafeRawBufferPointer, datastore: String) throws -> [UInt8]? {
        var fields: [(key: String, value: Range<Int>)] = []
        do {
            var offset = 0
            let count = try BinaryVarint.read(from: payload, at: &offset)
            guard count <= UInt64(payload.count) else { return nil }
            for _ in 0..<count {
                let keyLength = try BinaryVarint.readLength(from: payload, at: &offset, of: "key")
                let key = String(decoding: UnsafeRawBufferPointer(rebasing: payload[offset..<offset + keyLength]), as: UTF8.self)
                offset += keyLength
                let valueLength = try BinaryVarint.readLength(from: payload, at: &offset, of: "value")
                fields.append((key, offset..<offset + valueLength))
                offset += valueLength
            }
        } catch {
            return nil
        }
        let keys = try renamedKeys(fields.map(\.key), datastore: datastore)
        let missing = defaults.keys.filter { !keys.contains($0) }.sorted()
        guard keys != fields.map(\.key) || !missing.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(payload.count + 16 * missing.count)
        BinaryVarint.append(UInt64(fields.count + missing.count), to: &bytes)
        func appendField(_ key: String, _ value: some Collection<UInt8>) {
            BinaryVarint.append(UInt64(key.utf8.count), to: &bytes)
            bytes.append(contentsOf: key.utf8)
            BinaryVarint.append(UInt64(value.count), to: &bytes)
            bytes.append(contentsOf: value)
        }
        for (key, field) in zip(keys, fields) { appendField(key, payload[field.value]) }
        for key in missing { appendField(key, try BinaryInstanceEncoder().encode(defaults[key]!)) }
        return bytes
    }

    /// The top-level JSON object with keys renamed and defaults added.
    private func rewriteJSON(_ payload: Data, datastore: String) throws -> Data {
        guard var object = try? JSONSerialization.jsonObject(with: payload) as? [String: Any] else { return payload }
        let stored = Array(object.keys)
        let keys = try renamedKeys(stored, datastore: datastore)
        let missing = defaults.keys.filter { !keys.contains($0) }
        guard keys != stored || !missing.isEmpty else { return payload }
        for (old, new) in zip(stored, keys) where old != new {
            object[new] = object.removeValue(forKey: old)
        }
        for key in missing {
            object[key] = try JSONSerialization.jsonObject(with: try JSONEncoder().encode(defaults[key]!), options: .fragmentsAllowed)
        }
        return try JSONSerialization.data(withJSONObject: object)
    }
}

/// A rename that cannot be applied.
public enum RenameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A stored instance holds both the old key of a renamed field and its new key: which one
    /// is meant cannot be told. Rewrite the instance (or drop one field) with the old code.
    case fieldCollision(datastore: String, oldKey: String, newKey: String)
    /// The format's `fieldEvolution` contradicts itself (`reason` says how).
    case conflictingFieldRenames(datastore: String, reason: String)
    /// The datastore's name and one of its `formerNames` both hold data (or two former names
    /// do): renaming would overwrite one with the other. Remove the one not wanted
    /// (`Store.removeDatastore(named:)`) first.
    case datastoreNameTaken(datastore: String, formerName: String)

    public var description: String {
        switch self {
        case let .fieldCollision(datastore, old, new):
            return "\(datastore): a stored instance has both '\(old)' and '\(new)', but '\(old)' is declared renamed to '\(new)'"
        case let .conflictingFieldRenames(datastore, reason):
            return "\(datastore): the declared field renames conflict: \(reason)"
        case let .datastoreNameTaken(datastore, former):
            return "\(datastore): cannot take over the data of former name '\(former)': '\(datastore)' or another former name holds data already"
        }
    }
}

extension InstanceEnvelope {
    /// Decodes a payload stored with the current version, applying the format's field evolution.
    static func decodeCurrent<F: DatastoreFormat>(_ format: F.Type, from payload: UnsafeRawBufferPointer, coding: InstanceCoding) throws -> F.Instance {
        guard let evolution = F.fieldEvolution else { return try decodePayload(F.Instance.self, from: payload, coding: coding) }
        return try evolution.decode(F.Instance.self, from: payload, coding: coding, datastore: F.name)
    }
}
