import Foundation
import StrataCore

/// What the typed layer (`Strata`) keeps in a store, recognized from tree names alone: a datastore
/// `X` is a tree `X` with a sibling `X#info`; `X#log` and `X#index.NAME` are its bookkeeping trees.
struct DatastoreSummary {
    let name: String
    let instances: Int
    /// The format version recorded in `X#info` (the version of the code that last declared it).
    let version: String?
    let indexes: [(name: String, isDirect: Bool)]
    /// "binary" or "json", read from the first instance's envelope; nil for an empty datastore.
    let coding: String?

    /// Whether `tree` is this datastore's primary tree or one of its bookkeeping trees.
    func owns(_ tree: String) -> Bool { tree == name || tree.hasPrefix(name + "#") }
}

enum StoreCatalog {
    /// Envelope coding tags of the typed layer (see StoredInstance.swift).
    static let binaryTag: UInt8 = 1
    static let jsonTag: UInt8 = 2

    static func datastores(in transaction: Transaction) throws -> [DatastoreSummary] {
        let names = try transaction.treeNames()
        let all = Set(names)
        return try names.filter { all.contains($0 + "#info") }.map { name in
            let primary = try transaction.tree(name)
            var coding: String?
            if let cursor = try? transaction.cursor(primary), try cursor.first() {
                switch try cursor.value().first {
                case binaryTag: coding = "binary"
                case jsonTag: coding = "json"
                default: coding = nil
                }
            }
            var version: String?
            var indexes: [(String, Bool)] = []
            if let descriptor = try transaction.get("descriptor", in: transaction.tree(name + "#info")),
               let object = try? JSONSerialization.jsonObject(with: Data(descriptor.bytes)) as? [String: Any] {
                version = object["version"] as? String
                for index in object["indexes"] as? [[String: Any]] ?? [] {
                    if let indexName = index["name"] as? String { indexes.append((indexName, index["isDirect"] as? Bool ?? false)) }
                }
            }
            return DatastoreSummary(name: name, instances: try transaction.count(primary), version: version,
                                    indexes: indexes.map { (name: $0.0, isDirect: $0.1) }, coding: coding)
        }
    }

    /// The JSON payload of a JSON-coded instance envelope: tag 2, the version in the
    /// order-preserving key encoding (an 8-byte integer, or an escaped string ending in 00 00),
    /// then the JSON text. Nil when the bytes are not such an envelope.
    static func jsonPayload(ofEnvelope bytes: [UInt8]) -> Data? {
        guard bytes.first == jsonTag, bytes.count > 1 else { return nil }
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
            if (try? JSONSerialization.jsonObject(with: payload, options: [.fragmentsAllowed])) != nil { return payload }
        }
        return nil
    }
}
