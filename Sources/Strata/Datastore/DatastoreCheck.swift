import Foundation
import StrataCore

/// What a consistency check of one datastore found.
public struct DatastoreCheckReport: Sendable, Equatable {
    /// The datastore checked.
    public let datastore: String
    /// Instances read.
    public internal(set) var instances = 0
    /// Index entries read (of the indexes checked).
    public internal(set) var indexEntries = 0
    /// One line per problem (at most `DatastoreCheckReport.problemLimit`).
    public internal(set) var problems: [String] = []
    /// No problem was found.
    public var isClean: Bool { problems.isEmpty }

    /// Listing stops after this many problems.
    public static let problemLimit = 200

    init(datastore: String) { self.datastore = datastore }

    mutating func problem(_ text: String) {
        if problems.count < DatastoreCheckReport.problemLimit { problems.append("\(datastore): \(text)") }
    }
}

/// What `Store.check()` found: the engine's page check and one report per datastore.
public struct StoreCheckReport: Sendable {
    /// The engine's check of every page (`Database.check`).
    public let pages: CheckReport
    /// One format-free report per datastore.
    public let datastores: [DatastoreCheckReport]
    /// Every problem found, pages first.
    public var problems: [String] { pages.problems + datastores.flatMap(\.problems) }
    /// No problem was found anywhere.
    public var isClean: Bool { pages.isClean && datastores.allSatisfy(\.isClean) }
}

extension Datastore {
    /// Checks, in one read snapshot, that the datastore is consistent with its format: every
    /// instance decodes and is stored under its own identifier, every instance has exactly the
    /// index entries its values call for (direct entries holding its current bytes), and every
    /// index entry belongs to an instance. Indexes not built yet (`indexesNeedingBuild`) are
    /// skipped. Problems are reported, not thrown; throws only if the snapshot cannot be read.
    ///
    /// ```swift
    /// let report = try books.check()
    /// for problem in report.problems { print(problem) }
    /// ```
    public func check() throws -> DatastoreCheckReport {
        let stale = schema.staleIndexNames
        return try store.read { context in
            var report = DatastoreCheckReport(datastore: F.name)
            let transaction = context.transaction
            let indexes = schema.indexes.filter { !stale.contains($0.name) }
            // Per index: every entry key the instances call for -> the identifier it belongs to.
            var expected = [[[UInt8]: [UInt8]]](repeating: [:], count: indexes.count)
            if let primary = try context.tree(schema.layout.primary) {
                try transaction.scan(primary) { key, envelope in
                    report.instances += 1
                    let idBytes = key.bytes
                    let instance: F.Instance
                    do { instance = try schema.decode(envelope) } catch {
                        report.problem("instance \(hexBytes(idBytes)) does not decode: \(error)")
                        return true
                    }
                    if F.identifier(of: instance).orderedKeyBytes != idBytes {
                        report.problem("instance \(hexBytes(idBytes)) is stored under another identifier than its own")
                    }
                    for (position, info) in indexes.enumerated() {
                        for value in info.definition.encodedValues(of: instance) { expected[position][value + idBytes] = idBytes }
                    }
                    return true
                }
            }
            for (position, info) in indexes.enumerated() {
                var missing = expected[position]
                if let tree = try context.tree(info.tree) {
                    let primary = info.isDirect ? try context.tree(schema.layout.primary) : nil
                    try transaction.scan(tree) { key, value in
                        report.indexEntries += 1
                        let keyBytes = key.bytes
                        guard let idBytes = missing.removeValue(forKey: keyBytes) else {
                            report.problem("index '\(info.name)' has entry \(hexBytes(keyBytes)) that no instance calls for")
                            return true
                        }
                        if let primary,
                           try transaction.get(idBytes, in: primary)?.bytes != value.bytes {
                            report.problem("direct index '\(info.name)' entry \(hexBytes(keyBytes)) holds other bytes than its instance")
                        }
                        return true
                    }
                }
                for key in missing.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                    report.problem("index '\(info.name)' lacks entry \(hexBytes(key))")
                }
            }
            return report
        }
    }
}
