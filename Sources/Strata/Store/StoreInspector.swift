import Foundation
import StrataCore

/// One datastore as found in a store, without its format: what tools (`strata stat`, `dump`,
/// `check`) can learn from the trees alone.
public struct DatastoreSummary: Sendable, Equatable {
    /// One index as recorded in the datastore's stored declaration.
    public struct IndexSummary: Sendable, Equatable {
        /// The index's name (the format property that declares it).
        public let name: String
        /// Whether the index is `@Direct` (its entries hold copies of the instances).
        public let isDirect: Bool
        /// From the stored declaration; nil if it cannot be read.
        public let kind: IndexKind?
    }

    /// The datastore's name (its primary tree's name).
    public let name: String
    /// Number of entries in the primary tree (0 if it does not exist).
    public let instances: Int
    /// The format version recorded by the code that last declared the datastore.
    public let version: String?
    /// The indexes of the stored declaration; empty if none was recorded.
    public let indexes: [IndexSummary]
    /// How the first instance is encoded; nil for an empty datastore.
    public let coding: InstanceCoding?
    /// The recorded shape of binary-coded instances, if any (see `InstanceShape`).
    let shape: StoredInstanceShape?

    /// Whether `tree`'s values are this datastore's instance envelopes: its primary tree and its
    /// direct indexes.
    public func holdsInstances(_ tree: String) -> Bool {
        let layout = DatastoreLayout(name: name)
        return TreeName.same(tree, layout.primary) || indexes.contains { $0.isDirect && TreeName.same(tree, layout.index($0.name)) }
    }
}

/// Format-free inspection of the typed layer's trees in any snapshot: the knowledge of how the
/// typed layer lays out a store (`DatastoreLayout`, instance envelopes) stays in this module.
public enum StoreInspector {
    /// Every datastore in the snapshot, in name order.
    public static func datastores(in transaction: Transaction) throws -> [DatastoreSummary] {
        try DatastoreLayout.datastoreNames(in: transaction).map { try summary(of: $0, in: transaction) }
    }

    static func summary(of name: String, in transaction: Transaction) throws -> DatastoreSummary {
        let layout = DatastoreLayout(name: name)
        let context = StoreReadContext(transaction: transaction)
        var coding: InstanceCoding?
        var instances = 0
        if let primary = try context.tree(layout.primary) {
            instances = try transaction.count(primary)
            let cursor = try transaction.cursor(primary)
            if try cursor.first() { coding = InstanceEnvelope.coding(ofEnvelope: try cursor.value().bytes) }
        }
        let descriptor = try DatastoreDescriptor.stored(in: context, layout: layout)
        let indexes = (descriptor?.indexes ?? []).map { index in
            DatastoreSummary.IndexSummary(name: index.name, isDirect: index.isDirect,
                                          kind: IndexKind(rawValue: String(index.signature.prefix { $0 != "(" })))
        }
        let shape = try context.tree(layout.info).flatMap { try StoredInstanceShape.stored(in: $0, of: transaction) }
        return DatastoreSummary(name: name, instances: instances, version: descriptor?.version, indexes: indexes, coding: coding, shape: shape)
    }

    /// The instance an envelope holds as JSON text on one line, without its Swift type: the
    /// payload of a JSON-coded instance. Nil when it cannot be shown (see also
    /// `StoreInspector.json(ofEnvelope:in:)` for binary-coded ones).
    public static func jsonPayload(ofEnvelope bytes: [UInt8]) -> [UInt8]? {
        guard InstanceEnvelope.coding(ofEnvelope: bytes) == .json else { return nil }
        // The version is an Int (8 bytes) or a String (escaped, ending in 00 00) in the
        // order-preserving key encoding; the payload is whichever of both starts valid JSON.
        var candidates: [Int] = []
        if bytes.count > 9 { candidates.append(9) }
        var index = 1
        while index + 1 < bytes.count {
            if bytes[index] == 0 && bytes[index + 1] == 0 {
                candidates.append(index + 2)
                break
            }
            index += bytes[index] == 0 ? 2 : 1
        }
        for start in candidates where start < bytes.count && (bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "[")) {
            let payload = Data(bytes[start...])
            guard let object = try? JSONSerialization.jsonObject(with: payload, options: [.fragmentsAllowed]) else { continue }
            if !payload.contains(0x0A) && !payload.contains(0x0D) { return Array(payload) }
            return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])).map(Array.init)
        }
        return nil
    }

    /// The instance an envelope of `datastore` holds, as JSON on one line without its Swift
    /// type: a JSON-coded one as stored, a binary-coded one rendered with the shape the store
    /// recorded for its version (`BinaryJSONRenderer`). Nil if it cannot be shown (no shape
    /// recorded for the version that wrote it, or not an envelope).
    public static func json(ofEnvelope bytes: [UInt8], in datastore: DatastoreSummary) -> [UInt8]? {
        switch InstanceEnvelope.coding(ofEnvelope: bytes) {
        case .json?:
            return jsonPayload(ofEnvelope: bytes)
        case .binary?:
            guard let shape = datastore.shape, bytes.starts(with: shape.prefix) else { return nil }
            return bytes.withUnsafeBytes { raw in
                Array(BinaryJSONRenderer.render(UnsafeRawBufferPointer(rebasing: raw[shape.prefix.count...]), shape: shape.shape).utf8)
            }
        case nil:
            return nil
        }
    }

    /// A format-free consistency check of the datastore `name` in the snapshot: every instance
    /// is a well-formed envelope; every index entry ends with the identifier of an existing
    /// instance (and a direct entry holds that instance's bytes); a single-valued index
    /// (one-to-one, one-to-many) has exactly one entry per instance. What only the format
    /// knows (which values each instance is indexed under) is checked by `Datastore.check()`.
    public static func check(datastore name: String, in transaction: Transaction) throws -> DatastoreCheckReport {
        var report = DatastoreCheckReport(datastore: name)
        let layout = DatastoreLayout(name: name)
        let context = StoreReadContext(transaction: transaction)
        guard let primary = try context.tree(layout.primary) else { return report }
        var identifierLengths = Set<Int>()
        try transaction.scan(primary) { key, envelope in
            report.instances += 1
            identifierLengths.insert(key.count)
            if InstanceEnvelope.coding(ofEnvelope: envelope.bytes) == nil {
                report.problem("instance \(hexBytes(key.bytes)) is not an instance envelope (unknown coding tag)")
            }
            return true
        }
        let lengths = identifierLengths.sorted()
        let summary = try summary(of: name, in: transaction)
        for index in summary.indexes {
            guard let tree = try context.tree(layout.index(index.name)) else {
                if report.instances > 0 { report.problem("index '\(index.name)' is declared but its tree is missing") }
                continue
            }
            let singleValued = index.kind == .oneToOne || index.kind == .oneToMany
            var named = Set<[UInt8]>()
            try transaction.scan(tree) { key, value in
                report.indexEntries += 1
                let keyBytes = key.bytes
                var owner: (id: [UInt8], envelope: ByteView)?
                for length in lengths where length < keyBytes.count {
                    let id = Array(keyBytes.suffix(length))
                    if let envelope = try transaction.get(id, in: primary) {
                        owner = (id, envelope)
                        break
                    }
                }
                guard let owner else {
                    report.problem("index '\(index.name)' entry \(hexBytes(keyBytes)) names no instance")
                    return true
                }
                if index.isDirect && owner.envelope.bytes != value.bytes {
                    report.problem("direct index '\(index.name)' entry \(hexBytes(keyBytes)) holds other bytes than its instance")
                }
                if singleValued && !named.insert(owner.id).inserted {
                    report.problem("index '\(index.name)' has a second entry for instance \(hexBytes(owner.id))")
                }
                return true
            }
            if singleValued && named.count < report.instances {
                report.problem("index '\(index.name)' has no entry for \(report.instances - named.count) of \(report.instances) instances")
            }
        }
        return report
    }
}

extension Store {
    /// The datastores in this store (whether or not this process opened them), from one snapshot.
    public func datastoreSummaries() throws -> [DatastoreSummary] {
        try read { try StoreInspector.datastores(in: $0.transaction) }
    }

    /// Checks the whole store: every page of the latest snapshot (`Database.check`), then every
    /// datastore without its format (`StoreInspector.check(datastore:in:)`; use
    /// `Datastore.check()` for the full check a format allows). Problems are reported, not
    /// thrown. `strata check` runs this.
    public func check(progress: ((UInt64, UInt64) -> Void)? = nil) throws -> StoreCheckReport {
        let pages = try database.check(progress: progress)
        let datastores = try read { context in
            try DatastoreLayout.datastoreNames(in: context.transaction).map { name in
                do { return try StoreInspector.check(datastore: name, in: context.transaction) } catch {
                    var report = DatastoreCheckReport(datastore: name)
                    report.problem("cannot be read: \(error)")
                    return report
                }
            }
        }
        return StoreCheckReport(pages: pages, datastores: datastores)
    }
}

extension InstanceEnvelope {
    /// The coding an envelope's tag names, or nil if it is not an envelope.
    static func coding(ofEnvelope bytes: [UInt8]) -> InstanceCoding? {
        switch bytes.first {
        case binaryTag: return .binary
        case jsonTag: return .json
        default: return nil
        }
    }
}
