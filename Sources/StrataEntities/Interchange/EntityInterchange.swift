import Foundation
import Strata
import StrataCore

/// How much of the store an export holds.
public enum EntityExportMode: String, Sendable, Codable {
    /// Every entry of every property with its datestamp and label, and the deleted identifiers:
    /// importing it into an empty store and exporting again gives the same document.
    case full
    /// The current value of each property only (no history, labels or deletions).
    case compact
}

/// What an import did.
public struct EntityImportReport: Hashable, Sendable {
    /// Entities the store did not have.
    public var created = 0
    /// Entries appended (entries the store already had, same datestamp, value and label, are skipped).
    public var entries = 0
    /// Entities deleted because the document lists them as deleted.
    public var deleted = 0
    /// Entries not imported because their entity is deleted in this store (deletion is final:
    /// a deleted identifier is never brought back).
    public var skippedEntries = 0
}

/// The JSON interchange document of an entity store:
///
/// ```json
/// {"format":"strata-entities","version":1,"mode":"full",
///  "entities":[{"id":"…","type":"person","created":-978307200,"modified":…,
///               "properties":{"name":[{"value":{"string":"Ada"},"datestamp":…,"type":"label"}]}}],
///  "deleted":[{"id":"…","type":"…","created":…,"modified":…}]}
/// ```
///
/// Datestamps are seconds since 2001-01-01 as JSON numbers (exact: a Double prints and parses
/// back to the same value). A value is an object with one key naming its kind (`int`, `double`,
/// `bool`, `string`, `date`, `data` (base64), `uuid`, `entity`, `array`); a removal entry has no
/// `value`. Compact documents carry `values` (key -> value) instead of `properties`.
struct EntityDocument: Codable {
    static let formatName = "strata-entities"
    var format = EntityDocument.formatName
    var version = 1
    var mode: EntityExportMode
    var entities: [Entity]
    var deleted: [Entity]?

    struct Entity: Codable {
        var id: EntityID
        var type: String
        var created: Double
        var modified: Double
        var properties: [String: [Entry]]?
        var values: [String: Value]?
    }

    struct Entry: Codable {
        var value: Value?
        var datestamp: Double
        var type: String?
    }

    /// An `EntityValue` as a one-key object.
    struct Value: Codable {
        var value: EntityValue

        enum Kind: String, CodingKey { case bool, int, double, date, string, data, uuid, entity, array }

        init(_ value: EntityValue) { self.value = value }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Kind.self)
            switch value {
            case .bool(let v): try container.encode(v, forKey: .bool)
            case .int(let v): try container.encode(v, forKey: .int)
            case .double(let v): try container.encode(v, forKey: .double)
            case .date(let v): try container.encode(v.timeIntervalSinceReferenceDate, forKey: .date)
            case .string(let v): try container.encode(v, forKey: .string)
            case .data(let v): try container.encode(v.base64EncodedString(), forKey: .data)
            case .uuid(let v): try container.encode(v, forKey: .uuid)
            case .entity(let v): try container.encode(v, forKey: .entity)
            case .array(let v): try container.encode(v.map(Value.init), forKey: .array)
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Kind.self)
            guard container.allKeys.count == 1, let kind = container.allKeys.first else {
                throw EntityError.invalidInterchange(reason: "a value must be an object with exactly one of the keys bool, int, double, date, string, data, uuid, entity, array (at \(decoder.codingPath.map(\.stringValue).joined(separator: ".")))")
            }
            switch kind {
            case .bool: value = .bool(try container.decode(Bool.self, forKey: kind))
            case .int: value = .int(try container.decode(Int.self, forKey: kind))
            case .double: value = .double(try container.decode(Double.self, forKey: kind))
            case .date: value = .date(Date(timeIntervalSinceReferenceDate: try container.decode(Double.self, forKey: kind)))
            case .string: value = .string(try container.decode(String.self, forKey: kind))
            case .data:
                guard let data = Data(base64Encoded: try container.decode(String.self, forKey: kind)) else {
                    throw EntityError.invalidInterchange(reason: "data value is not base64 (at \(decoder.codingPath.map(\.stringValue).joined(separator: ".")))")
                }
                value = .data(data)
            case .uuid: value = .uuid(try container.decode(UUID.self, forKey: kind))
            case .entity: value = .entity(try container.decode(EntityID.self, forKey: kind))
            case .array: value = .array(try container.decode([Value].self, forKey: kind).map(\.value))
            }
        }
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }
}

extension EntityReadContext {
    /// The whole entity store of this snapshot as an interchange document (see `EntityExportMode`).
    /// A NaN datestamp an older build stored is written as it is ("nan"); `importJSON` refuses
    /// such a document (`invalidInterchange`), since this build never stores a NaN datestamp.
    public func exportJSON(_ mode: EntityExportMode = .full) throws -> Data {
        var document = EntityDocument(mode: mode, entities: [], deleted: mode == .full ? [] : nil)
        let headers = try allHeaders()
        for (id, header) in headers {
            var entity = EntityDocument.Entity(id: id, type: header.type, created: header.created.timeIntervalSinceReferenceDate,
                                               modified: header.modified.timeIntervalSinceReferenceDate)
            if header.isDeleted {
                if mode == .full { document.deleted!.append(entity) }
                continue
            }
            let latest = try latestEntries(id: id)
            switch mode {
            case .full:
                var properties: [String: [EntityDocument.Entry]] = [:]
                for (key, _) in latest {
                    properties[key] = try history(of: .id(id), key: key).map {
                        EntityDocument.Entry(value: $0.value.map(EntityDocument.Value.init), datestamp: $0.datestamp.timeIntervalSinceReferenceDate, type: $0.type)
                    }
                }
                entity.properties = properties
            case .compact:
                var values: [String: EntityDocument.Value] = [:]
                for (key, entry) in latest { if let value = entry.entry.value { values[key] = EntityDocument.Value(value) } }
                entity.values = values
            }
            document.entities.append(entity)
        }
        return try EntityDocument.encoder().encode(document)
    }
}

extension EntityWriteContext {
    /// Adds an interchange document to the store, merging: unknown entities are created with
    /// their identifier, type and creation datestamp; entries are appended unless the store
    /// already has the same entry (datestamp, value, label), so importing a document twice
    /// changes nothing; entities the document lists as deleted are deleted. Compact documents
    /// set each value at its entity's `modified` datestamp unless it is already the current one.
    /// An identifier names one entity of one type: a document that gives an entity of this
    /// store (live or deleted) another type, or lists one identifier with two types, is invalid.
    /// Deletion is final: the entries of an entity deleted here are not imported, and the report
    /// counts them (`skippedEntries`).
    /// - Throws: `EntityError.invalidInterchange` for a document this build cannot read, a NaN
    ///   datestamp, a value nested deeper than `EntityValueCoding.maximumDepth` or an entity of
    ///   another type (and the size errors for over-long keys and labels); the transaction then
    ///   writes nothing.
    @discardableResult
    public func importJSON(_ data: Data) throws -> EntityImportReport {
        // One operation: if it throws after appending, the write fails (see `operation`).
        try operation { try importDocument(data) }
    }

    private func importDocument(_ data: Data) throws -> EntityImportReport {
        let document: EntityDocument
        do {
            document = try EntityDocument.decoder().decode(EntityDocument.self, from: data)
        } catch let error as EntityError {
            throw error
        } catch {
            throw EntityError.invalidInterchange(reason: "\(error)")
        }
        guard document.format == EntityDocument.formatName, document.version == 1 else {
            throw EntityError.invalidInterchange(reason: "format '\(document.format)' version \(document.version) (this build reads \(EntityDocument.formatName) version 1)")
        }
        var report = EntityImportReport()
        // Names, datestamps, values and the document's own types first: nothing is written when
        // one cannot be. (An identifier listed twice with two types, in `entities` or `deleted`.)
        var documentTypes: [EntityID: String] = [:]
        for entity in document.entities + (document.deleted ?? []) {
            try checkTypeLabel(entity.type)
            if let other = documentTypes.updateValue(entity.type, forKey: entity.id), other != entity.type {
                throw EntityError.invalidInterchange(reason: "entity \(entity.id) is listed as a '\(other)' and as a '\(entity.type)'")
            }
            try Self.checkImported(entity.created, "created", of: entity)
            try Self.checkImported(entity.modified, "modified", of: entity)
            for (key, entries) in entity.properties ?? [:] {
                try checkKey(key)
                for entry in entries {
                    if let type = entry.type { try checkTypeLabel(type) }
                    try Self.checkImported(entry.datestamp, "an entry datestamp of '\(key)'", of: entity)
                    if let value = entry.value?.value { try Self.checkImported(value, key: key, of: entity) }
                }
            }
            for (key, value) in entity.values ?? [:] {
                try checkKey(key)
                try Self.checkImported(value.value, key: key, of: entity)
            }
        }
        deferredTargets = []
        defer { deferredTargets = nil }
        // Every entity exists before any entry refers to it.
        for entity in document.entities where try header(entity.id) == nil {
            try create(entity.id, type: entity.type, properties: [:], at: Date(timeIntervalSinceReferenceDate: entity.created))
            report.created += 1
        }
        for entity in document.entities + (document.deleted ?? []) {
            if let header = try header(entity.id), header.type != entity.type {
                throw EntityError.invalidInterchange(reason: "entity \(entity.id) is a '\(entity.type)' in the document and a '\(header.type)' here")
            }
        }
        for entity in document.entities {
            guard try liveHeader(entity.id) != nil else {
                report.skippedEntries += (entity.properties ?? [:]).values.reduce(0) { $0 + $1.count } + (entity.values?.count ?? 0)
                continue
            }
            for (key, entries) in (entity.properties ?? [:]).sorted(by: { $0.key < $1.key }) {
                // A set: a key may have a long history, and every imported entry is looked up.
                let existing = Set(try history(of: .id(entity.id), key: key))
                for entry in entries {
                    let imported = PropertyEntry(entry.value?.value, datestamp: Date(timeIntervalSinceReferenceDate: entry.datestamp), type: entry.type)
                    if existing.contains(imported) { continue }
                    try append(imported, key: key, to: entity.id)
                    report.entries += 1
                }
            }
            let stamp = Date(timeIntervalSinceReferenceDate: entity.modified)
            for (key, value) in (entity.values ?? [:]).sorted(by: { $0.key < $1.key }) {
                if try latest(id: entity.id, name: EntityLayout.encodedName(key))?.entry.value == value.value { continue }
                try append(PropertyEntry(value.value, datestamp: stamp), key: key, to: entity.id)
                report.entries += 1
            }
        }
        for gone in document.deleted ?? [] {
            let stamp = Date(timeIntervalSinceReferenceDate: gone.modified)
            if try header(gone.id) == nil {
                // Never seen here: keep the marker so the identifier is not reused.
                try create(gone.id, type: gone.type, properties: [:], at: Date(timeIntervalSinceReferenceDate: gone.created))
            }
            report.deleted += try delete([.id(gone.id)], at: stamp).deleted.count
        }
        // No current relationship may point at an entity that is missing or deleted.
        for target in deferredTargets ?? [] where try liveHeader(target) == nil {
            if let link = try links(to: target, through: nil).first {
                throw EntityError.unresolvedReference(reference: "relationship '\(link.key)' of \(link.source) to \(target)")
            }
        }
        return report
    }
}

extension EntityWriteContext {
    /// Throws `invalidInterchange` for a NaN datestamp (`what`) of a document's `entity`.
    fileprivate static func checkImported(_ datestamp: Double, _ what: @autoclosure () -> String, of entity: EntityDocument.Entity) throws {
        guard !datestamp.isNaN else {
            throw EntityError.invalidInterchange(reason: "\(what()) of entity \(entity.id) is NaN, which cannot be ordered")
        }
    }

    /// Throws `invalidInterchange` for a value of `key` of a document's `entity` nested deeper
    /// than `EntityValueCoding.maximumDepth`.
    fileprivate static func checkImported(_ value: EntityValue, key: String, of entity: EntityDocument.Entity) throws {
        let depth = value.arrayDepth
        guard depth <= EntityValueCoding.maximumDepth else {
            throw EntityError.invalidInterchange(reason: "the value of '\(key)' of entity \(entity.id) nests arrays \(depth) levels deep, more than \(EntityValueCoding.maximumDepth)")
        }
    }
}

extension EntityStore {
    /// The whole entity store as a JSON interchange document, from one snapshot.
    public func exportJSON(_ mode: EntityExportMode = .full) async throws -> Data {
        try await read { try $0.exportJSON(mode) }
    }
}

extension EntityStore where Access == ReadWrite {
    /// Imports an interchange document in one transaction (see `EntityWriteContext.importJSON`).
    @discardableResult
    public func importJSON(_ data: Data) async throws -> EntityImportReport {
        try await write { try $0.importJSON(data) }
    }
}
