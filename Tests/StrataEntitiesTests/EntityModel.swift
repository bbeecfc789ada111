import Foundation
@testable import StrataEntities

/// The in-memory model the randomized test compares the entity store with: every entity's
/// entries in the order they were added, from which current values, history, as-of reads,
/// reverse links and query results are computed the simple way.
///
/// It numbers entities and entries as the store does (one sequence, counting every entity
/// created and every entry added), because query results are in that order: types by creation,
/// equal values by the number of the entry that set them.
struct EntityModel {
    struct Entity {
        var type: String
        var created: Date
        var modified: Date
        /// The sequence number of the creation.
        var sequence: UInt64
        /// Entries per key, in the order they were added.
        var entries: [String: [PropertyEntry]] = [:]
        /// The sequence number of each entry of `entries`, in the same order.
        var sequences: [String: [UInt64]] = [:]
    }

    var live: [EntityID: Entity] = [:]
    var deleted: Set<EntityID> = []
    /// The store's next sequence number.
    var sequence: UInt64 = 0

    /// History by (datestamp, order added): the store's order.
    static func history(_ list: [PropertyEntry]) -> [PropertyEntry] {
        list.enumerated().sorted { ($0.element.datestamp, $0.offset) < ($1.element.datestamp, $1.offset) }.map(\.element)
    }

    func current(_ id: EntityID, _ key: String) -> PropertyEntry? {
        live[id]?.entries[key].flatMap { Self.history($0).last }
    }

    func currentValue(_ id: EntityID, _ key: String) -> EntityValue? { current(id, key)?.value }

    /// The sequence number of the current entry of `key`.
    func currentSequence(_ id: EntityID, _ key: String) -> UInt64? {
        guard let list = live[id]?.entries[key], let numbers = live[id]?.sequences[key] else { return nil }
        return zip(list, numbers).enumerated().max { ($0.element.0.datestamp, $0.offset) < ($1.element.0.datestamp, $1.offset) }?.element.1
    }

    func asOf(_ id: EntityID, _ key: String, _ date: Date) -> PropertyEntry? {
        live[id]?.entries[key].flatMap { Self.history($0).last { $0.datestamp <= date } }
    }

    mutating func append(_ entry: PropertyEntry, key: String, to id: EntityID) {
        live[id]!.entries[key, default: []].append(entry)
        live[id]!.sequences[key, default: []].append(sequence)
        sequence += 1
        if entry.datestamp > live[id]!.modified { live[id]!.modified = entry.datestamp }
    }

    mutating func create(_ id: EntityID, type: String, at date: Date, properties: [String: EntityValue]) {
        live[id] = Entity(type: type, created: date, modified: date, sequence: sequence)
        sequence += 1
        for key in properties.keys.sorted() { append(PropertyEntry(properties[key]!, datestamp: date), key: key, to: id) }
    }

    /// Properties of other entities whose current value refers to `target`.
    func links(to target: EntityID) -> Set<EntityLink> {
        var links = Set<EntityLink>()
        for (id, entity) in live {
            for key in entity.entries.keys where currentValue(id, key)?.referencedEntities.contains(target) == true {
                links.insert(EntityLink(source: id, key: key))
            }
        }
        return links
    }

    /// The store's deletion rule (see `EntityWriteContext.delete`).
    mutating func delete(_ id: EntityID, at date: Date) -> Set<EntityLink> {
        guard live[id] != nil else { return [] }
        live[id] = nil
        deleted.insert(id)
        let detached = links(to: id)
        // In the store's order: by the reverse index's key (the property key's encoding, then the source).
        let ordered = detached.sorted {
            let (lhs, rhs) = (EntityLayout.encodedName($0.key), EntityLayout.encodedName($1.key))
            return lhs == rhs ? $0.source < $1.source : lhs.lexicographicallyPrecedes(rhs)
        }
        for link in ordered {
            let current = self.current(link.source, link.key)!
            let stamp = max(date, current.datestamp)
            append(PropertyEntry(current.value!.removingReferences(to: id), datestamp: stamp, type: current.type), key: link.key, to: link.source)
        }
        return detached
    }

    /// Drops, per property, all entries before `date` but the newest of them; returns how many.
    mutating func compact(before date: Date) -> Int {
        var dropped = 0
        for id in Array(live.keys) {
            for key in Array(live[id]!.entries.keys) {
                let list = live[id]!.entries[key]!
                let older = list.enumerated().filter { $0.element.datestamp < date }
                guard older.count > 1 else { continue }
                let keep = older.max { ($0.element.datestamp, $0.offset) < ($1.element.datestamp, $1.offset) }!.offset
                let drop = Set(older.map(\.offset)).subtracting([keep])
                dropped += drop.count
                live[id]!.entries[key] = list.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
                live[id]!.sequences[key] = live[id]!.sequences[key]!.enumerated().filter { !drop.contains($0.offset) }.map(\.element)
            }
        }
        return dropped
    }

    /// The entities of `type` in creation order.
    func entities(ofType type: String) -> [EntityID] {
        live.filter { $0.value.type == type }.sorted { $0.value.sequence < $1.value.sequence }.map(\.key)
    }

    /// Entities whose current value of `key` lies in `range`, by (value, sequence of the current entry).
    func matching(_ key: String, _ range: EntityValueRange, type: String? = nil) -> [EntityID] {
        live.keys.compactMap { id -> (EntityValue, UInt64, EntityID)? in
            guard let value = currentValue(id, key), range.contains(value), type == nil || live[id]!.type == type else { return nil }
            return (value, currentSequence(id, key)!, id)
        }
        .sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
        .map(\.2)
    }
}
