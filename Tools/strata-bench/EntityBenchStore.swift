// The entity workloads (StrataBenchKit/EntityWorkload.swift) on StrataEntities' EntityStore,
// through its public API: one `writeNow`/`readNow` transaction per call, the bulk operations
// (`resolve`, `records`) where the workload is bulk. The synchronous forms measure the store, not
// the hop to a dispatch queue that the async forms add per operation.
import Foundation
import Strata
import StrataBenchKit
import StrataCore
import StrataEntities

final class StrataEntityBenchStore: EntityBenchStore {
    private let store: EntityStore<ReadWrite>

    init(path: String, durability: BookDurability) throws {
        var options = DatabaseOptions()
        options.durability = durability == .full ? .full : .none
        store = try EntityStore(at: path, options: options)
    }

    private static func value(_ value: BenchValue) -> EntityValue {
        switch value {
        case .int(let v): .int(v)
        case .double(let v): .double(v)
        case .string(let v): .string(v)
        case .bool(let v): .bool(v)
        }
    }

    func create(_ entities: ArraySlice<BenchEntity>, datestamp: Double) throws {
        let references = entities.map { entity in
            EntityReference.id(EntityID(entity.id)).createIfMissing(
                as: "item", with: Dictionary(uniqueKeysWithValues: entity.properties.map { ($0.key, Self.value($0.value)) }))
        }
        try store.writeNow(at: Date(timeIntervalSinceReferenceDate: datestamp)) { tx in
            guard try tx.resolve(references).count == references.count else { throw EntityError.corrupt(reason: "an entity was not created") }
        }
    }

    func set(_ changes: ArraySlice<BenchSet>) throws {
        try store.writeNow { tx in
            for change in changes {
                try tx.set(change.key, to: Self.value(change.value), of: .id(EntityID(change.id)), at: Date(timeIntervalSinceReferenceDate: change.datestamp))
            }
        }
    }

    func read(_ ids: ArraySlice<UUID>, keys: [String]) throws -> Int {
        let references = ids.map { EntityReference.id(EntityID($0)) }
        return try store.readNow { tx in
            // Keyed by reference: a reference asked for twice is one entry (counted per request).
            let records = try tx.records(references, keys: keys)
            return references.reduce(0) { $0 + (records[$1]?.properties.count ?? 0) }
        }
    }

    func history(_ ids: ArraySlice<UUID>, key: String) throws -> Int {
        try store.readNow { tx in try ids.reduce(0) { $0 + (try tx.history(of: .id(EntityID($1)), key: key)).count } }
    }

    func resolve(names: ArraySlice<String>, datestamp: Double) throws -> Int {
        let references = names.map { EntityReference.named($0, ofType: "item").createIfMissing() }
        return try store.writeNow(at: Date(timeIntervalSinceReferenceDate: datestamp)) { tx in
            try tx.resolve(references)
            return tx.createdEntities.count
        }
    }

    func close() { store.database.close() }
}
