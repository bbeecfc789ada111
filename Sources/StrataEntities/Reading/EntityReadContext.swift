import Foundation
import Strata
import StrataCore

/// One read transaction of an entity store: every read sees the same committed snapshot.
/// Get one from `EntityStore.read`; the write context (`EntityWriteContext`) can do all of this
/// too, seeing its own changes.
///
/// Bulk reads take lists of references and return dictionaries keyed by the reference the
/// caller passed, holding only the entities that exist and only the properties asked for.
public class EntityReadContext {
    let transaction: Transaction
    let registry: EntityKindRegistry
    /// Tree handles of this transaction; nil remembers a tree that does not exist yet. A short
    /// list: the names are the layout's constants, which compare equal at their first word.
    private var openedTrees: [(name: String, tree: Tree?)] = []
    /// References resolved in this transaction (see `EntityReference`).
    var resolved: [EntityReference.Identity: EntityID] = [:]

    init(transaction: Transaction, registry: EntityKindRegistry) {
        self.transaction = transaction
        self.registry = registry
    }

    /// The committed generation this snapshot reads (a write context: the one it builds on).
    public var generation: UInt64 { transaction.generation }

    var maximumKeySize: Int { transaction.database.maximumKeySize }

    func tree(_ name: String) throws -> Tree? {
        // By index: iterating the pairs copies each (retaining its name and tree).
        for index in openedTrees.indices where TreeName.same(openedTrees[index].name, name) { return openedTrees[index].tree }
        let tree = try transaction.treeIfPresent(name)
        openedTrees.append((name, tree))
        return tree
    }

    func remember(_ tree: Tree, named name: String) {
        if let index = openedTrees.firstIndex(where: { TreeName.same($0.name, name) }) { openedTrees[index].tree = tree } else { openedTrees.append((name, tree)) }
    }

    // MARK: Records and entries

    /// A header this transaction changed and has not written yet (write contexts only).
    func pendingHeader(_ id: EntityID) -> RecordHeader? { nil }

    func header(_ id: EntityID) throws -> RecordHeader? {
        if let pending = pendingHeader(id) { return pending }
        return try storedHeader(id)
    }

    /// The header as stored (without the changes a write context has not written yet).
    func storedHeader(_ id: EntityID) throws -> RecordHeader? {
        guard let entries = try tree(EntityLayout.entries),
              let bytes = try transaction.get(EntityLayout.headerKey(id), in: entries) else { return nil }
        return try bytes.withUnsafeBytes { try RecordHeader($0, typeName: typeName) }
    }

    /// The last property key encoded: bulk operations name the same few keys over and over.
    private var lastName: (key: String, encoded: [UInt8])?

    /// `EntityLayout.encodedName(key)`, remembering the last one.
    func encodedName(_ key: String) -> [UInt8] {
        if let lastName, lastName.key == key { return lastName.encoded }
        let encoded = EntityLayout.encodedName(key)
        lastName = (key, encoded)
        return encoded
    }

    /// The last type label decoded: entities read together are mostly of one type, and a
    /// byte comparison is cheaper than decoding (and validating) the label again.
    /// (Two fields, not an optional pair: the check then reads them in place instead of copying
    /// the pair, a retain and release of both, per header.)
    private var lastTypeEncoding: [UInt8] = []
    private var lastTypeName: String?

    /// The type label whose ordered encoding is `raw`.
    func typeName(_ raw: UnsafeRawBufferPointer) throws -> String {
        if let name = lastTypeName, lastTypeEncoding.withUnsafeBytes({ RecordHeader.equal($0, raw) }) { return name }
        let name = try RecordHeader.decodeName(raw)
        lastTypeEncoding = Array(raw)
        lastTypeName = name
        return name
    }

    func liveHeader(_ id: EntityID) throws -> RecordHeader? {
        guard let header = try header(id), !header.isDeleted else { return nil }
        return header
    }

    /// The current (last) entry of property `name` of entity `id`, removals included: from
    /// the entity's header (see `RecordHeader`).
    func latest(id: EntityID, name: [UInt8]) throws -> LatestEntry? {
        guard let header = try header(id) else { return nil }
        return try latest(id: id, name: name, in: header)
    }

    /// `latest(id:name:)` with the entity's header at hand.
    func latest(id: EntityID, name: [UInt8], in header: RecordHeader) throws -> LatestEntry? {
        try header.withCurrentEntry(named: name) { stored in
            guard let stored else { return nil }
            let entry = if let body = stored.body {
                try PropertyEntry.decodeBody(body, datestamp: stored.datestamp)
            } else {
                try historyEntry(id: id, name: name, datestamp: stored.datestamp, sequence: stored.sequence)
            }
            return LatestEntry(entry: entry, sequence: stored.sequence)
        }
    }

    /// The property entry a header's current entry stands for (read from the history when the
    /// header does not hold its body).
    func entry(id: EntityID, current: RecordHeader.CurrentEntry) throws -> PropertyEntry {
        if let body = current.body { return try body.withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: current.datestamp) } }
        return try historyEntry(id: id, name: current.name, datestamp: current.datestamp, sequence: current.sequence)
    }

    /// The history entry with this key, which a header names.
    /// - Throws: `EntityError.corrupt` when it is missing.
    func historyEntry(id: EntityID, name: [UInt8], datestamp: Date, sequence: UInt64) throws -> PropertyEntry {
        let key = EntityLayout.historyKey(id: id.bytes, name: name, datestamp: datestamp, sequence: sequence)
        guard let entries = try tree(EntityLayout.entries), let body = try transaction.get(key, in: entries) else {
            throw EntityError.corrupt(reason: "entity \(id) has no history entry \(sequence) for its current value")
        }
        return try body.withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: datestamp) }
    }

    /// The current entry of every property of entity `id` (removals included), by key.
    func latestEntries(id: EntityID) throws -> [(key: String, latest: LatestEntry)] {
        guard let header = try header(id) else { return [] }
        return try header.currentEntries().map { current in
            (try Self.decodeName(current.name), LatestEntry(entry: try entry(id: id, current: current), sequence: current.sequence))
        }
    }

    static func decodeName(_ name: [UInt8]) throws -> String { try name.withUnsafeBytes(RecordHeader.decodeName) }

    /// The entity `id` as this transaction changed it (`header`, not yet written), with the
    /// current entries of `keys` (all when nil), or nil when it is deleted.
    func record(of id: EntityID, pending header: RecordHeader, keys: WantedKeys?) throws -> EntityRecord? {
        guard !header.isDeleted else { return nil }
        var properties: [String: PropertyEntry] = [:]
        for current in try header.currentEntries() {
            let key: String
            if let keys {
                guard let wanted = keys.index(ofEncoding: current.name) else { continue }
                key = keys.keys[wanted]
            } else {
                key = try Self.decodeName(current.name)
            }
            let entry = try entry(id: id, current: current)
            if entry.value != nil { properties[key] = entry }
        }
        return EntityRecord(id: id, type: header.type, created: header.created, modified: header.modified, properties: properties)
    }

    /// The live entity `id` from the stored bytes of its header, with the current entries of
    /// `results`' keys, or nil when it is deleted. Only the asked-for entries are decoded (the
    /// walk stops once it met them all), into a copy of `results`' template (see
    /// `ResultProperties`), without hashing their keys.
    /// `keys` walks `results.keys` (lent once for the whole read).
    func record(of id: EntityID, header raw: UnsafeRawBufferPointer, keys: WantedKeys.Walker,
                into results: inout ResultProperties) throws -> EntityRecord? {
        let (header, entriesStart) = try RecordHeader.decodeFields(raw, typeName: typeName)
        // A deleted entity's header has no current entries.
        guard !header.isDeleted else { return nil }
        results.begin()
        try keys.visit(in: UnsafeRawBufferPointer(rebasing: raw[entriesStart...])) { key, stamp, body in
            let datestamp = try EntityFixedWidth.orderedDate(stamp, at: 0)
            let entry: PropertyEntry
            if let body {
                entry = try PropertyEntry.decodeBody(body, datestamp: datestamp)
            } else {
                let sequence = UInt64(bigEndian: stamp.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                entry = try historyEntry(id: id, name: Array(keys.encoding(key)), datestamp: datestamp, sequence: sequence)
            }
            // A pattern, not `!= nil`: the comparison copied the value out and destroyed the copy.
            if case .some = entry.value { results.set(entry, forKey: key) }
        }
        return EntityRecord(id: id, type: header.type, created: header.created, modified: header.modified, properties: results.finish())
    }

    /// The record with every property, from the stored bytes of the entity's header.
    private func record(of id: EntityID, header raw: UnsafeRawBufferPointer) throws -> EntityRecord? {
        var properties = [String: PropertyEntry](minimumCapacity: 8)
        var deferred: [(key: String, current: RecordHeader.CurrentEntry)] = []
        let header = try RecordHeader.decode(raw, typeName: typeName) { stored in
            let key = try RecordHeader.decodeName(stored.name)
            guard let body = stored.body else {
                deferred.append((key, RecordHeader.CurrentEntry(name: Array(stored.name), datestamp: stored.datestamp, sequence: stored.sequence)))
                return
            }
            let entry = try PropertyEntry.decodeBody(body, datestamp: stored.datestamp)
            if entry.value != nil { properties[key] = entry }
        }
        guard !header.isDeleted else { return nil }
        for (key, current) in deferred {
            let entry = try entry(id: id, current: current)
            if entry.value != nil { properties[key] = entry }
        }
        return EntityRecord(id: id, type: header.type, created: header.created, modified: header.modified, properties: properties)
    }

    // MARK: Resolving references

    /// The entity `reference` denotes, or nil; never creates one.
    /// - Throws: `EntityError.ambiguousReference` when a property match finds several.
    func find(_ reference: EntityReference) throws -> EntityID? {
        // An identifier is checked, not memoized: its header lookup is the whole resolution.
        if case .id(let id) = reference.match { return try liveHeader(id) == nil ? nil : id }
        if let known = resolved[reference.identity] {
            if try stillMatches(known, reference.match) { return known }
            resolved[reference.identity] = nil // changed since: resolve it afresh
        }
        let found: EntityID?
        switch reference.match {
        case .id(let id):
            found = try liveHeader(id) == nil ? nil : id
        case .property(let key, let value):
            let matches = try matching(key: key, range: EntityValueRange(equalTo: value), type: reference.type, limit: 2, order: .ascending)
            if matches.count > 1 {
                let count = try matching(key: key, range: EntityValueRange(equalTo: value), type: reference.type, limit: nil, order: .ascending).count
                throw EntityError.ambiguousReference(reference: reference.description, matches: count)
            }
            found = matches.first
        }
        if let found { resolved[reference.identity] = found }
        return found
    }

    /// Whether the entity a property match resolved to earlier in this transaction still has
    /// that current value (a later operation may have changed or removed it, or deleted the entity).
    private func stillMatches(_ id: EntityID, _ match: EntityReference.Match) throws -> Bool {
        guard case .property(let key, let value) = match else { return true }
        guard let header = try liveHeader(id) else { return false }
        return try latest(id: id, name: encodedName(key), in: header)?.entry.value == value
    }

    /// The entities the references denote, keyed by reference (those that resolve to nothing
    /// are absent). Never creates entities; in a write context, `resolve` does.
    /// - Throws: `EntityError.ambiguousReference` for a property match with several matches.
    public func existing(_ references: [EntityReference]) throws -> [EntityReference: EntityID] {
        var ids: [EntityReference: EntityID] = [:]
        for reference in references { if let id = try find(reference) { ids[reference] = id } }
        return ids
    }

    // MARK: Reading entities

    /// The entities the references denote, with the current values of `keys` (all their
    /// properties when nil). References that resolve to nothing are absent from the result.
    ///
    /// ```swift
    /// let people = try tx.records([.named("Ada"), .id(grace)], keys: ["born"])
    /// let born = try people[.named("Ada")]?.value("born", as: Int.self)
    /// ```
    public func records(_ references: [EntityReference], keys: [String]? = nil) throws -> [EntityReference: EntityRecord] {
        let names = keys.map(WantedKeys.init)
        var result: [EntityReference: EntityRecord] = [:]
        result.reserveCapacity(references.count)
        // The entities whose headers are to be looked up, by position in `references` (a
        // reference is a large value to copy). Headers this transaction changed are read from
        // memory at once instead.
        var found: [(position: Int, id: EntityID)] = []
        found.reserveCapacity(references.count)
        // By index, not `enumerated()`: its iterator copies each reference out (retains and
        // releases of its strings and dictionary) where a subscript reads it in place.
        for position in references.indices {
            // An identifier needs no resolution: reading the entity is the existence check.
            let resolved: EntityID? = if case .id(let direct) = references[position].match { direct } else { try find(references[position]) }
            guard let id = resolved else { continue }
            if let pending = pendingHeader(id) {
                if let record = try self.record(of: id, pending: pending, keys: names) { result[references[position]] = record }
            } else {
                found.append((position, id))
            }
        }
        guard let entries = try tree(EntityLayout.entries) else { return result }
        // The stored headers in one group lookup: the keys go in groups of 32; each key's
        // branch pages are walked and its leaf prefetched, then the group's leaves are searched,
        // so the leaves' cache misses overlap. Each record is built as its header is found,
        // while the header's leaf is in the cache.
        let headerKeys = EntityLayout.headerKeys(count: found.count) { found[$0].id }
        // Lent in place, not as views: a view retains and releases its page's owner.
        try headerKeys.withUnsafeBytes { headerKeys in
            if let names {
                var results = ResultProperties(names)
                try names.withWalker { keys in
                    try transaction.withEachValue(ofKeysIn: headerKeys, width: EntityLayout.headerKeyWidth, in: entries) { index, raw in
                        guard let raw, let record = try self.record(of: found[index].id, header: raw, keys: keys, into: &results) else { return }
                        result[references[found[index].position]] = record
                    }
                }
            } else {
                try transaction.withEachValue(ofKeysIn: headerKeys, width: EntityLayout.headerKeyWidth, in: entries) { index, raw in
                    guard let raw, let record = try self.record(of: found[index].id, header: raw) else { return }
                    result[references[found[index].position]] = record
                }
            }
        }
        return result
    }

    /// One entity, or nil when the reference resolves to nothing.
    public func record(_ reference: EntityReference, keys: [String]? = nil) throws -> EntityRecord? {
        try records([reference], keys: keys)[reference]
    }

    /// The current value of `key` of the entity as `T`.
    /// - Throws: `EntityError.unresolvedReference` when the reference denotes no entity,
    ///   `unknownKey` when the property has no value, `wrongValueType` when it is of another kind.
    public func value<T: EntityValueConvertible>(_ key: String, of reference: EntityReference, as type: T.Type = T.self) throws -> T {
        guard let record = try record(reference, keys: [key]) else { throw EntityError.unresolvedReference(reference: reference.description) }
        return try record.value(key, as: type)
    }

    // MARK: History

    /// Every entry of property `key` of the entity, oldest first (removals included; empty when
    /// the reference resolves to nothing).
    public func history(of reference: EntityReference, key: String) throws -> [PropertyEntry] {
        // An identifier needs no resolution: a missing or deleted entity has no entries.
        let direct: EntityID? = if case .id(let id) = reference.match { id } else { nil }
        guard let id = try direct ?? find(reference), let history = try tree(EntityLayout.entries) else { return [] }
        // Entity and key: the entries follow, one per datestamp and sequence, mostly in one leaf.
        // The prefix is built on the stack: it lives for this call only.
        let name = try historyName(key)
        var entries: [PropertyEntry] = []
        entries.reserveCapacity(16)
        try withUnsafeTemporaryAllocation(byteCount: 16 + name.count, alignment: 1) { prefix in
            Swift.withUnsafeBytes(of: id.uuid) { UnsafeMutableRawBufferPointer(rebasing: prefix[..<16]).copyMemory(from: $0) }
            name.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: prefix[16...]).copyMemory(from: $0) }
            try transaction.forEachEntry(withPrefix: UnsafeRawBufferPointer(prefix), in: history) { key, value in
                entries.append(try Self.entry(key: key, value: value))
                return true
            }
        }
        return entries
    }

    /// The entry of property `key` that was current at `date` (the newest at or before it), or
    /// nil when there was none. A removal entry has a nil value. After `compactHistory(before:)`
    /// dates before its cut-off see the newest entry kept from before it.
    /// - Throws: `EntityError.invalidDatestamp` when `date` is NaN.
    public func entry(of reference: EntityReference, key: String, asOf date: Date) throws -> PropertyEntry? {
        try EntityError.checkDatestamp(date, "the as-of date")
        let name = try historyName(key)
        guard let id = try find(reference), let history = try tree(EntityLayout.entries) else { return nil }
        let prefix = id.bytes + name
        let bound = EntityLayout.historyKey(id: id.bytes, name: name, datestamp: date, sequence: .max)
        var found: PropertyEntry?
        try transaction.scan(history, from: prefix, to: bound, upperInclusive: true, reverse: true) { key, value in
            found = try Self.entry(key: key, value: value)
            return false
        }
        return found
    }

    /// The value property `key` had at `date` (nil when it had none or had been removed).
    public func value(of reference: EntityReference, key: String, asOf date: Date) throws -> EntityValue? {
        try entry(of: reference, key: key, asOf: date)?.value
    }

    /// The encoding of property `key` as the history ranges of an entity start with it.
    /// - Throws: `EntityError.emptyName` for an empty key, which no write accepts: its encoding
    ///   is the header's name, so its range would hold the header, not history entries.
    private func historyName(_ key: String) throws -> [UInt8] {
        guard !key.isEmpty else { throw EntityError.emptyName(what: "property key") }
        return encodedName(key)
    }

    static func entry(key: ByteView, value: ByteView) throws -> PropertyEntry {
        try key.withUnsafeBytes { key in try value.withUnsafeBytes { try entry(key: key, value: $0) } }
    }

    /// The history entry stored under `key` with body `value`.
    /// - Throws: `EntityError.corrupt` for a key too short to hold a datestamp, or a damaged body.
    static func entry(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> PropertyEntry {
        // The 8 bytes before the sequence (see `EntityLayout.historyDatestamp`).
        guard key.count >= 32 else { throw EntityError.corrupt(reason: "history key of \(key.count) bytes") }
        return try PropertyEntry.decodeBody(value, datestamp: try EntityFixedWidth.orderedDate(key, at: key.count - 16))
    }

    // MARK: Queries

    /// Identifiers of the entities of `type`, in creation order (oldest first when ascending).
    public func entities(ofType type: String, limit: Int? = nil, order: EntityOrder = .ascending) throws -> [EntityID] {
        guard let types = try tree(EntityLayout.types) else { return [] }
        let prefix = EntityLayout.encodedName(type)
        var ids: [EntityID] = []
        guard limit.map({ $0 > 0 }) ?? true else { return [] }
        try transaction.scan(types, from: prefix, to: OrderedKeyWriter.prefixUpperBound(of: prefix), reverse: order == .descending) { key, value in
            guard key.count == prefix.count + EntityLayout.sequenceBytes, value.count == 16 else {
                throw EntityError.corrupt(reason: "type index entry of \(key.count) + \(value.count) bytes")
            }
            ids.append(value.withUnsafeBytes { EntityID(bytes: $0, at: 0) })
            return limit.map { ids.count < $0 } ?? true
        }
        return ids
    }

    /// How many entities of `type` exist.
    public func count(ofType type: String) throws -> Int { try entities(ofType: type).count }

    /// Entities whose current value of `key` equals `value` (of `type`, when given), in the
    /// order they got that value (the sequence of their current entries).
    public func entities(where key: String, equals value: EntityValue, ofType type: String? = nil,
                         limit: Int? = nil, order: EntityOrder = .ascending) throws -> [EntityID] {
        try matching(key: key, range: EntityValueRange(equalTo: value), type: type, limit: limit, order: order)
    }

    /// Entities whose current value of `key` lies in `range` (of `type`, when given), ordered by
    /// that value, then by when they got it (the sequence of their current entries; within one
    /// `set` of several entities, in no particular order). Exact for every kind of value (see
    /// `EntityValue`'s order).
    ///
    /// ```swift
    /// let thirties = try tx.entities(where: "age", in: EntityValueRange(30..<40), limit: 10)
    /// ```
    public func entities(where key: String, in range: EntityValueRange, ofType type: String? = nil,
                         limit: Int? = nil, order: EntityOrder = .ascending) throws -> [EntityID] {
        try matching(key: key, range: range, type: type, limit: limit, order: order)
    }

    /// Called before a range query reads the `values` index: a write context writes the index
    /// entries it keeps back first (see `EntityWriteContext.flushValueIndex`). Every reader of
    /// that index calls it or `keptBackIndexMatches`.
    func flushValueIndex() throws {}

    /// Called instead of `flushValueIndex` before an equality query reads the `values` index:
    /// the index entries a write context keeps back whose key is `prefix` (name and value)
    /// followed by a sequence, as (sequence, entity), in sequence order; a write context keeping
    /// many writes them back instead (and answers none). A read context keeps none.
    func keptBackIndexMatches(prefix: [UInt8]) throws -> [(sequence: UInt64, id: EntityID)] { [] }

    func matching(key: String, range: EntityValueRange, type: String?, limit: Int?, order: EntityOrder) throws -> [EntityID] {
        guard limit.map({ $0 > 0 }) ?? true else { return [] }
        let name = encodedName(key)
        let lower = range.lower?.orderedBytes
        // An equality range (get-or-create by a property) encodes its value once.
        let upper = range.upper.map { $0 == range.lower ? lower! : $0.orderedBytes }
        let maximum = maximumKeySize
        // An equality query whose value fits in an index key whole.
        let isEquality = range.lower != nil && range.upper == range.lower && range.upperInclusive
            && !EntityLayout.indexedValue(lower!, name: name, maximumKeySize: maximum).truncated
        if isEquality, order == .ascending, let found = try ascendingEqualityMatches(name: name, encoded: lower!, type: type, limit: limit) {
            return found
        }
        let from = name + (lower.map { EntityLayout.indexedValue($0, name: name, maximumKeySize: maximum).bytes } ?? [])
        // An equality query (a get-or-create by a property) looks at the entries a write keeps
        // back in memory instead of writing them first: writing them one query at a time cost a
        // descent into the index per query. They were all written in this transaction, after
        // every stored entry, so they follow the stored matches (of the same value) in sequence.
        let kept: [(sequence: UInt64, id: EntityID)]
        if isEquality { kept = try keptBackIndexMatches(prefix: from) } else {
            try flushValueIndex()
            kept = []
        }
        let to = OrderedKeyWriter.prefixUpperBound(of: name + (upper.map { EntityLayout.indexedValue($0, name: name, maximumKeySize: maximum).bytes } ?? []))
        // Entries whose indexed value was truncated share their index prefix, so within such a
        // group the index order is by entry sequence, not value: a group is always read whole and
        // the matches are sorted by (value, sequence) when any was truncated.
        var found: [(encoded: [UInt8], sequence: UInt64, id: EntityID)] = []
        var sawTruncated = false
        var lastIndexed: ArraySlice<UInt8> = []
        let trailer = EntityLayout.sequenceBytes
        if let values = try tree(EntityLayout.values) { try transaction.scan(values, from: from, to: to, reverse: order == .descending) { key, value in
            guard key.count >= name.count + trailer + 1, value.count == 16 || value.count == 17 else {
                throw EntityError.corrupt(reason: "value index entry of \(key.count) + \(value.count) bytes")
            }
            let indexed = ArraySlice(key[name.count..<(key.count - trailer)])
            // Enough found: stop at the next indexed value, or at once for an equality query (its
            // entries are in their final order, by sequence; a group of truncated values must be
            // read whole to be sorted by value).
            if let limit, found.count >= limit, isEquality || indexed != lastIndexed { return false }
            let id = value.withUnsafeBytes { EntityID(bytes: $0, at: 0) }
            let sequence = key.withUnsafeBytes { EntityLayout.trailingSequence(of: $0) }
            // A stale entry (its value was superseded, or its entity deleted) is skipped: the
            // entity's current entry of `key` must be the one the index entry was written for.
            guard let state = try indexState(of: id, name: name), state.sequence == sequence else { return true }
            if let type, state.type != type { return true }
            // An equality query's range holds exactly the entries of that value (encodings are
            // self-delimiting), so an entry that was not truncated needs no comparison.
            if value.count == 16, isEquality, key.count == from.count + trailer {
                found.append((lower!, sequence, id))
                lastIndexed = indexed
                return true
            }
            var encoded = Array(indexed)
            if value.count == 17 {
                // A truncated entry: compare the entity's stored value.
                guard let current = try latest(id: id, name: name)?.entry.value else {
                    throw EntityError.corrupt(reason: "value index entry of \(id) without a current value")
                }
                encoded = current.orderedBytes
                sawTruncated = true
            }
            if let lower, encoded.lexicographicallyPrecedes(lower) { return true }
            if let upper {
                let beyond = range.upperInclusive ? upper.lexicographicallyPrecedes(encoded) : !encoded.lexicographicallyPrecedes(upper)
                if beyond { return true }
            }
            found.append((encoded, sequence, id))
            lastIndexed = indexed
            return true
        } }
        if !kept.isEmpty {
            var current: [(encoded: [UInt8], sequence: UInt64, id: EntityID)] = []
            for (sequence, id) in kept {
                // Stale or of another type: skipped, as stored entries are.
                guard let state = try indexState(of: id, name: name), state.sequence == sequence else { continue }
                if let type, state.type != type { continue }
                current.append((lower!, sequence, id))
            }
            found = order == .ascending ? found + current : current.reversed() + found
        }
        if sawTruncated {
            func precedes(_ lhs: (encoded: [UInt8], sequence: UInt64, id: EntityID), _ rhs: (encoded: [UInt8], sequence: UInt64, id: EntityID)) -> Bool {
                lhs.encoded == rhs.encoded ? lhs.sequence < rhs.sequence : lhs.encoded.lexicographicallyPrecedes(rhs.encoded)
            }
            found.sort { order == .ascending ? precedes($0, $1) : precedes($1, $0) }
        }
        return Array(found.prefix(limit ?? found.count).map(\.id))
    }

    /// `matching` for an ascending equality query whose value fits an index key whole (`encoded`,
    /// after the key's `name`): walks the stored index entries of that value in key order until
    /// it has `limit` matches, and answers when every entry it visited is plain (its key the
    /// name, the value and a sequence; its value an identifier), or returns nil at the first one
    /// that is not (a truncated value, or bytes no writer produces): then `matching`'s general
    /// scan decides. Entries after the `limit`-th match are not visited. Writers put only plain
    /// entries under such a prefix, so on a store they wrote the answer is the general scan's
    /// (the same matches in the same order: stored ones, then those this transaction keeps back;
    /// see `matching`); on a damaged one, damage after the `limit`-th match goes unseen here
    /// where the general scan, which reads the whole range, would throw for it or skip it.
    /// Why a separate path: a get-or-create by a property makes one such query per reference,
    /// and a prefix walk (one descent, the leaf read in place) without the bounds, sort keys and
    /// copies of the general scan costs a fraction of it.
    private func ascendingEqualityMatches(name: [UInt8], encoded: [UInt8], type: String?, limit: Int?) throws -> [EntityID]? {
        let prefix = name + encoded
        let kept = try keptBackIndexMatches(prefix: prefix)
        var found: [EntityID] = []
        /// Whether `id`'s current entry of the key is the one numbered `sequence`, of `type`.
        func isCurrent(_ id: EntityID, _ sequence: UInt64) throws -> Bool {
            guard let state = try indexState(of: id, name: name), state.sequence == sequence else { return false }
            return type.map { state.type == $0 } ?? true
        }
        if let values = try tree(EntityLayout.values) {
            var plain = true
            let trailer = EntityLayout.sequenceBytes
            try prefix.withUnsafeBytes { prefix in
                try transaction.forEachEntry(withPrefix: prefix, in: values) { key, value in
                    guard key.count == prefix.count + trailer, value.count == 16 else {
                        plain = false
                        return false
                    }
                    if let limit, found.count >= limit { return false }
                    let id = EntityID(bytes: value, at: 0)
                    if try isCurrent(id, EntityLayout.trailingSequence(of: key)) { found.append(id) }
                    return true
                }
            }
            guard plain else { return nil }
        }
        for (sequence, id) in kept {
            if let limit, found.count >= limit { break }
            if try isCurrent(id, sequence) { found.append(id) }
        }
        return found
    }

    /// The type of live entity `id` and the sequence of its current entry of property `name`
    /// (nil when it has none), or nil when the entity is deleted or missing: what decides
    /// whether a `values` index entry is current. Reads the stored header without copying it.
    func indexState(of id: EntityID, name: [UInt8]) throws -> (type: String, sequence: UInt64?)? {
        if let header = pendingHeader(id) {
            guard !header.isDeleted else { return nil }
            return (header.type, try header.withCurrentEntry(named: name) { $0?.sequence })
        }
        guard let entries = try tree(EntityLayout.entries),
              let bytes = try transaction.get(EntityLayout.headerKey(id), in: entries) else { return nil }
        return try bytes.withUnsafeBytes { raw in
            let (header, entriesStart) = try RecordHeader.decodeFields(raw, typeName: typeName)
            guard !header.isDeleted else { return nil }
            // Only the entry of `name` is looked at (see `WantedKeys.entry(named:in:)`).
            let found = try name.withUnsafeBytes { try WantedKeys.entry(named: $0, in: UnsafeRawBufferPointer(rebasing: raw[entriesStart...])) }
            let sequence = found.map { UInt64(bigEndian: $0.stamp.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            return (header.type, sequence)
        }
    }

    /// The properties of other entities whose current value refers to the entity (through
    /// `key` only, when given): the reverse index, never a scan of the entities.
    public func referrers(to reference: EntityReference, through key: String? = nil) throws -> [EntityLink] {
        guard let id = try find(reference) else { return [] }
        return try links(to: id, through: key)
    }

    func links(to id: EntityID, through key: String?) throws -> [EntityLink] {
        guard let references = try tree(EntityLayout.references) else { return [] }
        let prefix = id.bytes + (key.map(EntityLayout.encodedName) ?? [])
        var links: [EntityLink] = []
        try transaction.scan(references, from: prefix, to: OrderedKeyWriter.prefixUpperBound(of: prefix)) { key, _ in
            links.append(try key.withUnsafeBytes { raw in
                guard raw.count >= 34 else { throw EntityError.corrupt(reason: "reference index key of \(raw.count) bytes") }
                var reader = OrderedKeyReader(UnsafeRawBufferPointer(rebasing: raw[16..<(raw.count - 16)]))
                let name = try reader.read(String.self)
                try reader.expectEnd()
                return EntityLink(source: EntityID(bytes: raw, at: raw.count - 16), key: name)
            })
            return true
        }
        return links
    }

    /// Every entity header (live and deleted), in identifier order: a pass over all entries.
    func allHeaders() throws -> [(EntityID, RecordHeader)] {
        guard let entries = try tree(EntityLayout.entries) else { return [] }
        var headers: [(EntityID, RecordHeader)] = []
        try transaction.scan(entries) { key, value in
            if key.count == 18 {
                headers.append((key.withUnsafeBytes { EntityID(bytes: $0, at: 0) }, try value.withUnsafeBytes { try RecordHeader($0) }))
            }
            return true
        }
        return headers
    }

    /// Every live entity's identifier, in identifier order.
    public func allEntities() throws -> [EntityID] {
        try allHeaders().filter { !$0.1.isDeleted }.map(\.0)
    }
}

/// One property of one entity that refers to another entity.
public struct EntityLink: Hashable, Sendable, CustomStringConvertible {
    /// The entity whose property holds the reference.
    public let source: EntityID
    /// The key of that property.
    public let key: String

    /// The property `key` of entity `source`.
    public init(source: EntityID, key: String) {
        self.source = source
        self.key = key
    }

    /// `source.key`.
    public var description: String { "\(source).\(key)" }
}

/// The order of query results.
public enum EntityOrder: Sendable {
    case ascending
    case descending
}
