import Foundation
import Strata
import StrataCore

/// The write transaction of an entity store: everything done through one context commits
/// together when the `EntityStore.write` block returns, and nothing is written if it throws.
/// Reads through it see its own changes.
///
/// Every entry written without an explicit datestamp gets `datestamp`, the time the
/// transaction began; entries with equal datestamps keep the order they were written in.
public final class EntityWriteContext: EntityReadContext {
    let write: WriteTransaction
    /// The datestamp of entries written without one.
    public let datestamp: Date
    private var sequence: UInt64?
    private var sequenceChanged = false
    /// The entities this transaction read or changed (see `KnownEntity`), by identifier: an
    /// operation looks an entity's header up when it resolves the reference and again when it
    /// appends, and one descent is enough; the changed headers are written when the operation is
    /// done with the entity (`writeStaged`) or at the end of the transaction.
    /// No runtime exclusivity checks on this and the other per-append buffers below (several
    /// accesses per append): only the thread running the transaction touches the context, and
    /// no closure that accesses one runs inside another access to it.
    /// Starts with room for `knownCapacity` entities, and an operation on more references makes
    /// room for all of them at once (`reserveKnown`): each growth of the table moves every
    /// entity it holds (their headers too). The start costs a single-`set` transaction about
    /// 25 KB of memory (256 buckets), not instructions; starting with room for 16 made the update workload
    /// (100 one-entity sets per transaction, growing the table three times) cost 2.4% more
    /// instructions per update (callgrind, 2026-11-25).
    @exclusivity(unchecked) private var known = [EntityID: KnownEntity](minimumCapacity: knownCapacity)
    private static let knownCapacity = 128
    /// The entities this transaction created (by get-or-create references or imports).
    public private(set) var createdEntities: Set<EntityID> = []
    /// While an import runs, the targets of relationships that became current: they are checked
    /// at its end, because a document may name an entity before the entry that creates it.
    var deferredTargets: Set<EntityID>?

    init(transaction: WriteTransaction, registry: EntityKindRegistry, datestamp: Date) {
        write = transaction
        self.datestamp = datestamp
        super.init(transaction: transaction, registry: registry)
    }

    /// The `entries` tree once this transaction has it writable: every property change puts
    /// into it, and a stored handle is cheaper than finding the tree by name each time.
    @exclusivity(unchecked) private var writableEntries: Tree?

    func writableEntriesTree() throws -> Tree {
        if let writableEntries { return writableEntries }
        let tree = try writableTree(EntityLayout.entries)
        writableEntries = tree
        return tree
    }

    func writableTree(_ name: String) throws -> Tree {
        if let tree = try tree(name) { return tree }
        let tree = try write.createTree(name)
        remember(tree, named: name)
        return tree
    }

    override func pendingHeader(_ id: EntityID) -> RecordHeader? { knownSlot(id).map { known.values[$0].header } }

    /// The entity last looked up in `known` and its position: an operation looks one entity up
    /// several times in a row (resolve, each appended key, the header's put), and comparing
    /// 16 bytes is cheaper than hashing them. Invariant: cleared whenever `known` gains or loses
    /// a key (positions are valid until then; changing a value in place keeps them).
    @exclusivity(unchecked) private var lastKnown: (id: EntityID, slot: Dictionary<EntityID, KnownEntity>.Index)?

    /// The position of `id` in `known`, or nil when this transaction has not read it.
    @inline(__always)
    private func knownSlot(_ id: EntityID) -> Dictionary<EntityID, KnownEntity>.Index? {
        if let lastKnown, lastKnown.id == id { return lastKnown.slot }
        guard let slot = known.index(forKey: id) else { return nil }
        lastKnown = (id, slot)
        return slot
    }

    /// Reads a field of the entity at `slot` of `known` in place. Reading it through
    /// `known.values[slot]` called the subscript's getter, which copied the whole entity out (its
    /// header's storage retained, then released) to read one field. `field` must not touch
    /// `self`: `known` is accessed without exclusivity checks, so an overlapping access would not
    /// trap.
    @inline(__always)
    private func readKnown<Field>(at slot: Dictionary<EntityID, KnownEntity>.Index, _ field: (inout KnownEntity) -> Field) -> Field {
        field(&known.values[slot])
    }

    /// Makes room in `known` for `count` more entities, when it has not: at least doubled, so
    /// that operations reserving a few each still grow the table a logarithmic number of times.
    private func reserveKnown(adding count: Int) {
        let needed = known.count + count
        guard needed > known.capacity else { return }
        lastKnown = nil
        known.reserveCapacity(max(needed, 2 * known.capacity))
    }

    /// Adds `entity` to `known` (not there yet).
    private func addKnown(_ entity: KnownEntity, of id: EntityID) {
        lastKnown = nil
        known[id] = entity
    }

    /// Identifiers found to have no header in this transaction (and not created since: a
    /// known header is looked at first). Creating by identifier looks twice: does the
    /// reference resolve, and was the identifier ever used.
    private var absent: Set<EntityID> = []

    /// Keeps `header` to be written (at the end of the operation that changes it, or of the transaction).
    private func setPending(_ header: RecordHeader, of id: EntityID) {
        if let index = knownSlot(id) {
            known.values[index].header = header
            known.values[index].headerChanged = true
        } else {
            addKnown(KnownEntity(header: header, headerChanged: true), of: id)
        }
    }

    /// Whether this transaction found `id` to have no header (see `absent`).
    private func isKnownAbsent(_ id: EntityID) -> Bool {
        // Most transactions never meet a missing identifier: skip hashing for the empty set.
        !absent.isEmpty && absent.contains(id)
    }

    /// Remembers what the first read of `id`'s stored header found: the header in `known`, or
    /// nothing in `absent`.
    private func noteStored(_ header: RecordHeader?, of id: EntityID) {
        if let header { addKnown(KnownEntity(header: header, headerChanged: false), of: id) } else { absent.insert(id) }
    }

    override func header(_ id: EntityID) throws -> RecordHeader? {
        if let slot = knownSlot(id) { return known.values[slot].header }
        if isKnownAbsent(id) { return nil }
        // Not `super.header`: it would look this transaction's headers up again (`pendingHeader`).
        let header = try storedHeader(id)
        noteStored(header, of: id)
        return header
    }

    /// Reads the header of `id` as the first half of rewriting it (when this transaction has
    /// not read it yet): the lookup makes the header's leaf writable and remembers it, so the
    /// header's put and the history entries after it (same leaf) skip the descent that a `get`
    /// followed by a `put` would make twice (see `WriteTransaction.valueForReplacing`). Only
    /// for entities about to be written: the leaf is copied (and written at commit) even if
    /// nothing changes in it.
    private func readHeaderForWriting(_ id: EntityID) throws {
        guard knownSlot(id) == nil, !isKnownAbsent(id),
              let entries = try writableEntries ?? tree(EntityLayout.entries) else { return }
        let stored = try EntityLayout.withHeaderKey(id) { try write.valueForReplacing($0, in: entries) }
        noteStored(try stored.map { try $0.withUnsafeBytes { try RecordHeader($0, typeName: typeName) } }, of: id)
    }

    /// The position of `id` in `known`, reading its header if this transaction has not yet.
    /// - Throws: `EntityError.corrupt` when the entity has no header (an entry without a record).
    private func knownIndex(of id: EntityID) throws -> Dictionary<EntityID, KnownEntity>.Index {
        if let index = knownSlot(id) { return index }
        guard try header(id) != nil, let index = knownSlot(id) else {
            throw EntityError.corrupt(reason: "entity \(id) has entries but no record")
        }
        return index
    }

    private func nextSequence() throws -> UInt64 {
        let current: UInt64
        if let sequence {
            current = sequence
        } else if let meta = try tree(EntityLayout.meta), let bytes = try write.get(EntityLayout.sequenceName, in: meta) {
            guard bytes.count == 8 else { throw EntityError.corrupt(reason: "sequence of \(bytes.count) bytes") }
            current = bytes.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
        } else {
            current = 0
        }
        guard current < .max else { throw EntityError.corrupt(reason: "the entity sequence is exhausted (\(current))") }
        sequence = current + 1
        sequenceChanged = true
        return current
    }

    /// The error for a put of a key ending in a fresh sequence number (a `types`, `values` or
    /// history key) that replaced an existing entry: the stored sequence (`entities.meta`) is
    /// behind the entries (a restored or foreign `meta`, a partial load), and the write would
    /// silently take over another entry. Nothing of the write commits (see `operation`).
    static func sequenceReused(in tree: String) -> EntityError {
        .corrupt(reason: "a new entry's sequence number is already used in \(tree): the stored entity sequence (\(EntityLayout.meta)) is behind the store's entries; load or restore \(EntityLayout.meta) together with the other entities.* trees of the same dump or backup")
    }

    /// Records what happened to `id` (whose header this transaction knows) for the change log.
    private func note(_ id: EntityID, _ kind: EntityChange.Kind) throws {
        known.values[try knownIndex(of: id)].noteChange(kind)
    }

    // MARK: Property keys of this transaction

    /// The property keys this transaction named, each with its encoding; a changed entity's keys
    /// are their positions here (`KnownEntity.changedKeys`), so noting a change hashes no string.
    @exclusivity(unchecked) private var names: [(key: String, encoded: [UInt8])] = []
    private var nameNumbers: [String: Int] = [:]
    /// The position in `names` of the last key asked for: bulk operations name the same few
    /// keys over and over, and comparing one string is cheaper than hashing it.
    @exclusivity(unchecked) private var lastNameNumber: Int?

    /// The number of `key` in `names` (added when new).
    private func nameNumber(_ key: String) -> Int {
        if let lastNameNumber, names[lastNameNumber].key == key { return lastNameNumber }
        // A short table is searched in order: comparing a few short strings is cheaper than
        // hashing one (a create names each of its keys in turn).
        if names.count <= 8 {
            for number in names.indices where names[number].key == key {
                lastNameNumber = number
                return number
            }
        }
        let number: Int
        if let known = nameNumbers[key] {
            number = known
        } else {
            number = names.count
            names.append((key, EntityLayout.encodedName(key)))
            nameNumbers[key] = number
        }
        lastNameNumber = number
        return number
    }

    override func encodedName(_ key: String) -> [UInt8] { names[nameNumber(key)].encoded }

    /// The first error a mutating operation of this context threw. Such an operation may have
    /// written part of its change (a history entry whose header never learned of it, say), and
    /// the context may hold headers it half updated, so the write must not commit: `finish()`
    /// throws `EntityError.failedOperation`, and so does any later operation. Undoing just the
    /// operation instead would need a nested transaction per operation, whose copies of the pages
    /// earlier operations dirtied would cost every bulk write.
    private var failure: (any Error)?

    /// Runs one public mutating operation; if it throws, the context is failed (see `failure`).
    /// History entries the operation staged are written before it returns (`writeStaged`).
    func operation<Result>(_ body: () throws -> Result) throws -> Result {
        if let failure { throw EntityError.failedOperation(reason: "\(failure)") }
        do {
            let result = try body()
            try writeStaged(header: false)
            return result
        } catch {
            failure = error
            throw error
        }
    }

    // MARK: Staged writes

    /// The history entries an operation appended to `stagedEntity` and has not written yet, as
    /// key and value bytes in `stagedBytes`. Why kept back: the entity's header sorts before its
    /// history, so writing the header first (one descent to the entity's leaf) lets the history
    /// entries after it land on the leaf the engine remembers (no descent each); writing the
    /// header at the end of the transaction instead cost a second descent per entity.
    /// Invariant: only one entity's entries are staged, of keys that have no other staged entry,
    /// and they are written before anything reads that entity's history or the operation ends.
    @exclusivity(unchecked) private var stagedEntity: EntityID?
    @exclusivity(unchecked) private var stagedBytes: [UInt8] = []
    @exclusivity(unchecked) private var stagedEntries: [(keyEnd: Int, valueEnd: Int)] = []

    /// Writes the staged history entries, after the entity's header when `header` is true and the
    /// header changed (then it is clean until the next change). If it throws, the context is failed.
    private func writeStaged(header: Bool) throws {
        guard let id = stagedEntity else { return }
        stagedEntity = nil
        do {
            let entries = try writableEntriesTree()
            if header, let index = knownSlot(id) { try putHeaderIfChanged(at: index, of: id, in: entries) }
            // Each key ends in a fresh sequence number: one that exists already means the stored
            // sequence is behind the store's entries (see `Self.sequenceReused`).
            let replaced = try stagedBytes.withUnsafeBytes { raw in
                var start = 0
                var replaced = false
                for entry in stagedEntries {
                    replaced = try write.put(UnsafeRawBufferPointer(rebasing: raw[start..<entry.keyEnd]),
                                             UnsafeRawBufferPointer(rebasing: raw[entry.keyEnd..<entry.valueEnd]), in: entries) || replaced
                    start = entry.valueEnd
                }
                return replaced
            }
            if replaced { throw Self.sequenceReused(in: EntityLayout.entries) }
            stagedBytes.removeAll(keepingCapacity: true)
            stagedEntries.removeAll(keepingCapacity: true)
        } catch {
            if failure == nil { failure = error }
            throw error
        }
    }

    /// The value of the header being put (`putHeaderIfChanged`), one buffer reused for all.
    @exclusivity(unchecked) private var headerBytes: [UInt8] = []

    /// Puts the header of `id`, at `slot` of `known`, if it changed since it was last written
    /// (into `entries`, the `EntityLayout.entries` tree); it is clean afterwards.
    private func putHeaderIfChanged(at slot: Dictionary<EntityID, KnownEntity>.Index, of id: EntityID, in entries: Tree) throws {
        guard readKnown(at: slot, { $0.headerChanged }) else { return }
        headerBytes.removeAll(keepingCapacity: true)
        // In place (`inout`): reading the entity out of the table would copy it.
        Self.encode(&known.values[slot], into: &headerBytes)
        _ = try EntityLayout.withHeaderKey(id) { key in try headerBytes.withUnsafeBytes { try write.put(key, $0, in: entries) } }
    }

    /// Appends the entity's header to `bytes` and marks it written.
    private static func encode(_ entity: inout KnownEntity, into bytes: inout [UInt8]) {
        entity.headerChanged = false
        entity.header.encode(into: &bytes)
    }

    /// `values` entries this transaction added and has not written yet, as key and value bytes in
    /// `indexBytes`. Why kept back: a write alternates between trees (history entry, index entry,
    /// history entry...), so every put would descend from the root; written together in key order,
    /// consecutive entries of one group land on the leaf the previous put left dirty and skip the
    /// descent.
    @exclusivity(unchecked) private var indexBytes: [UInt8] = []
    /// `head` is the key's first 16 bytes as two big-endian words (zero-padded): comparing them
    /// orders most pairs of keys without a call to `memcmp` (see `flushValueIndex`).
    @exclusivity(unchecked) private var indexEntries: [(start: Int, keyEnd: Int, valueEnd: Int, head: (UInt64, UInt64))] = []

    /// Writes the kept-back `values` entries, in key order. Runs before a range query reads that
    /// index, before anything deletes in it, and at the end of the transaction; an equality
    /// query reads the kept-back entries in memory instead (`keptBackIndexMatches`). A new
    /// reader of the `values` index must call one of the two. If it throws, the context is failed (the
    /// index may be half written).
    override func flushValueIndex() throws {
        guard !indexEntries.isEmpty else { return }
        do {
            let values = try writableTree(EntityLayout.values)
            let replaced = try indexBytes.withUnsafeBytes { raw in
                // Keys are distinct (each ends in its entry's sequence). Two keys whose heads
                // differ are ordered by them (the first differing byte decides, and a shorter
                // key's zero padding only ties, never reverses an order); equal heads are
                // compared whole.
                indexEntries.sort { lhs, rhs in
                    if lhs.head.0 != rhs.head.0 { return lhs.head.0 < rhs.head.0 }
                    if lhs.head.1 != rhs.head.1 { return lhs.head.1 < rhs.head.1 }
                    return RecordHeader.precedes(UnsafeRawBufferPointer(rebasing: raw[lhs.start..<lhs.keyEnd]),
                                                 UnsafeRawBufferPointer(rebasing: raw[rhs.start..<rhs.keyEnd]))
                }
                var replaced = false      // as in `writeStaged`: each key ends in a fresh sequence
                for entry in indexEntries {
                    replaced = try write.put(UnsafeRawBufferPointer(rebasing: raw[entry.start..<entry.keyEnd]),
                                             UnsafeRawBufferPointer(rebasing: raw[entry.keyEnd..<entry.valueEnd]), in: values) || replaced
                }
                return replaced
            }
            if replaced { throw Self.sequenceReused(in: EntityLayout.values) }
            indexBytes.removeAll(keepingCapacity: true)
            indexEntries.removeAll(keepingCapacity: true)
        } catch {
            if failure == nil { failure = error }
            throw error
        }
    }

    /// The kept-back entries an equality query would find (see the read context's
    /// `keptBackIndexMatches`), searched in memory while there are few; past
    /// `keptBackSearchLimit` they are written back and the query reads them from the index.
    override func keptBackIndexMatches(prefix: [UInt8]) throws -> [(sequence: UInt64, id: EntityID)] {
        guard !indexEntries.isEmpty else { return [] }
        guard indexEntries.count <= Self.keptBackSearchLimit else {
            try flushValueIndex()
            return []
        }
        var matches: [(sequence: UInt64, id: EntityID)] = []
        indexBytes.withUnsafeBytes { raw in
            prefix.withUnsafeBytes { wanted in
                // The key is the prefix and a sequence; the value an identifier (a truncated
                // entry's value has a mark after it, and cannot match a value that fits whole).
                for entry in indexEntries where entry.keyEnd - entry.start == wanted.count + EntityLayout.sequenceBytes
                    && entry.valueEnd - entry.keyEnd == 16
                    && memcmp(raw.baseAddress! + entry.start, wanted.baseAddress!, wanted.count) == 0 {
                    let sequence = UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: entry.keyEnd - EntityLayout.sequenceBytes, as: UInt64.self))
                    matches.append((sequence, EntityID(bytes: raw, at: entry.keyEnd)))
                }
            }
        }
        return matches.sorted { $0.sequence < $1.sequence }
    }

    /// How many kept-back index entries an equality query searches in memory (beyond, it writes them).
    static let keptBackSearchLimit = 64

    /// Writes what this transaction kept for its end: value index entries, record headers, the
    /// sequence, the change log.
    /// - Throws: `EntityError.failedOperation` if an operation of this context threw.
    func finish() throws {
        if let failure { throw EntityError.failedOperation(reason: "\(failure)") }
        try writeStaged(header: true)
        try flushValueIndex()
        if known.values.contains(where: \.headerChanged) {
            let entries = try writableEntriesTree()
            // By position, not `known.indices` (that would hold a second reference to the
            // table, and the first in-place change would copy it).
            var slot = known.startIndex
            while slot != known.endIndex {
                try putHeaderIfChanged(at: slot, of: known.keys[slot], in: entries)
                known.formIndex(after: &slot)
            }
        }
        if sequenceChanged, let sequence {
            let meta = try writableTree(EntityLayout.meta)
            try write.put(EntityLayout.sequenceName, withUnsafeBytes(of: sequence.bigEndian) { Array($0) }, in: meta)
            // Every commit that creates entities states the layout (see `EntityLayout.checkVersion`).
            try write.put(EntityLayout.versionName, EntityLayout.versionBytes, in: meta)
        }
        var encoder = EntityChangeLog.Encoder(expectedCount: known.count)
        var changedAny = false
        for (id, entity) in known {
            guard let kind = entity.change else { continue }
            changedAny = true
            encoder.begin(id, kind: kind)
            entity.forEachChangedKey { encoder.addEncodedKey(names[$0].encoded) }
            encoder.end()
        }
        if changedAny {
            try EntityChangeLog.append(encoder.finished(), changes: changeRecords, in: write, log: try writableTree(EntityLayout.log))
        }
    }

    /// What this transaction did to each entity it changed, as observers read it.
    private func changeRecords() -> [EntityID: EntityChange] {
        var changes: [EntityID: EntityChange] = [:]
        for (id, entity) in known {
            guard let kind = entity.change else { continue }
            var keys = Set<String>()
            entity.forEachChangedKey { keys.insert(names[$0].key) }
            changes[id] = EntityChange(kind: kind, keys: keys)
        }
        return changes
    }

    // MARK: Checks

    /// Throws `EntityError` for an empty or over-long property key; nothing is written before.
    func checkKey(_ key: String) throws {
        guard !key.isEmpty else { throw EntityError.emptyName(what: "property key") }
        let bytes = encodedName(key).count
        let maximum = EntityLayout.maximumNameBytes(maximumKeySize: maximumKeySize)
        guard bytes <= maximum else { throw EntityError.keyTooLong(key: key, bytes: bytes, maximum: maximum) }
    }

    /// Throws `EntityError.valueTooDeep` for an entry of key number `number` whose value nests
    /// arrays deeper than `EntityValueCoding.maximumDepth` (which no reader would decode). Not
    /// inlined: only array values get here, off the path of every other write.
    @inline(never)
    private func checkDepth(of entry: PropertyEntry, number: Int) throws {
        let depth = entry.value?.arrayDepth ?? 0
        guard depth <= EntityValueCoding.maximumDepth else {
            throw EntityError.valueTooDeep(key: names[number].key, depth: depth, maximum: EntityValueCoding.maximumDepth)
        }
    }

    /// The last type label encoded for the `types` index, with its encoding.
    private var lastType: (label: String, encoded: [UInt8])?

    /// `EntityLayout.encodedName(type)`, remembering the last one (bulk creates name one type).
    private func typeEncoding(_ type: String) -> [UInt8] {
        if let lastType, lastType.label == type { return lastType.encoded }
        let encoded = EntityLayout.encodedName(type)
        lastType = (type, encoded)
        return encoded
    }

    /// The last type label that passed `checkTypeLabel`: bulk creates name one type over and over.
    private var lastCheckedLabel: String?

    func checkTypeLabel(_ label: String) throws {
        if label == lastCheckedLabel { return }
        guard !label.isEmpty else { throw EntityError.emptyName(what: "entity type label") }
        let bytes = EntityLayout.encodedName(label).count
        let maximum = EntityLayout.maximumNameBytes(maximumKeySize: maximumKeySize)
        guard bytes <= maximum else { throw EntityError.typeLabelTooLong(label: label, bytes: bytes, maximum: maximum) }
        lastCheckedLabel = label
    }

    /// Checks every name a reference may write (its type and initial keys) before anything is written.
    func check(_ references: [EntityReference]) throws {
        for reference in references { try check(reference) }
    }

    func check(_ reference: EntityReference) throws {
        if let type = reference.type { try checkTypeLabel(type) }
        if case .property(let key, _) = reference.match { try checkKey(key) }
        for key in reference.initialProperties.keys { try checkKey(key) }
    }

    // MARK: Resolving and creating

    /// The entities the references denote, creating those that match nothing and say how
    /// (`createIfMissing`, `new`). References that match nothing and cannot create are absent.
    /// - Throws: `EntityError.ambiguousReference`; the size errors for names of created entities.
    @discardableResult
    public func resolve(_ references: [EntityReference]) throws -> [EntityReference: EntityID] {
        try operation {
            try check(references)
            var ids: [EntityReference: EntityID] = [:]
            ids.reserveCapacity(references.count)
            // Room for every reference in the resolution memo too: growing it rehashes each
            // entry (its matched value) again.
            resolved.reserveCapacity(resolved.count + references.count)
            reserveKnown(adding: references.count)
            for reference in references { if let id = try resolveCreating(reference) { ids[reference] = id } }
            return ids
        }
    }

    func resolveCreating(_ reference: EntityReference) throws -> EntityID? {
        if let id = try find(reference) { return id }
        guard reference.createsIfMissing else { return nil }
        guard let type = reference.type else { throw EntityError.unresolvedReference(reference: reference.description) }
        var properties = reference.initialProperties
        let id: EntityID
        switch reference.match {
        case .id(let fixed):
            // A deleted entity's identifier never comes back.
            if try header(fixed) != nil { return nil }
            id = fixed
        case .property(let key, let value):
            id = EntityID.timeOrdered()
            properties[key] = value
        }
        try create(id, type: type, properties: properties, at: datestamp)
        // An identifier is never memoized (`find` checks it directly); a property match is.
        if case .property = reference.match { resolved[reference.identity] = id }
        return id
    }

    /// The entity, which must exist (or be created by the reference).
    func require(_ reference: EntityReference) throws -> EntityID {
        guard let id = try resolveCreating(reference) else { throw EntityError.unresolvedReference(reference: reference.description) }
        return id
    }

    func create(_ id: EntityID, type: String, properties: [String: EntityValue], at created: Date) throws {
        let sequence = try nextSequence()
        setPending(RecordHeader(isDeleted: false, created: created, modified: created, sequence: sequence, type: type), of: id)
        var typeKey = typeEncoding(type)
        typeKey.appendBigEndian(sequence)
        if try withUnsafeBytes(of: id.uuid, { try write.put(typeKey, $0, in: try writableTree(EntityLayout.types)) }) {
            throw Self.sequenceReused(in: EntityLayout.types)
        }
        try note(id, .created)
        createdEntities.insert(id)
        // In the order of the encoded keys, the order of the header's entries and of the history
        // keys (so the history entries follow each other on the entity's leaf). Not `String`'s
        // `<`: for text not in NFC it differs from the order of the encodings (which are NFC) and
        // is not even a consistent order (see `OrderedKey+String.swift`).
        // The header has no entries yet and each key is appended after the one before, so
        // `previous` is the header's last entry: a key that sorts after it (every key, as
        // distinct keys have distinct encodings) goes at the end, found without a search.
        // Sorted as numbers of the key table, whose encodings are compared in place.
        var sorted: [(number: Int, value: EntityValue)] = []
        sorted.reserveCapacity(properties.count)
        for (key, value) in properties { sorted.append((nameNumber(key), value)) }
        sorted.sort { lhs, rhs in RecordHeader.precedes(names[lhs.number].encoded, names[rhs.number].encoded) }
        var previous: Int?
        for (number, value) in sorted {
            let sortsLast = previous.map { RecordHeader.precedes(names[$0].encoded, names[number].encoded) } ?? true
            try stage(PropertyEntry(value, datestamp: created), number: number, to: id, isNew: true, sortsLast: sortsLast)
            previous = number
        }
        try writeStaged(header: true)
    }

    // MARK: Setting and removing

    /// Sets `properties` on every entity the references denote (creating those that say how),
    /// appending one entry per property at `datestamp` (default: the transaction's).
    /// Returns the entity of each reference.
    /// - Throws: `EntityError.unresolvedReference` when a reference denotes nothing (or a value
    ///   refers to an entity that does not exist); the size errors before anything is written.
    @discardableResult
    public func set(_ properties: [String: EntityValue], of references: [EntityReference], at datestamp: Date? = nil) throws -> [EntityReference: EntityID] {
        try operation {
            try EntityError.checkDatestamp(datestamp, "the datestamp of a set")
            // By index, not through a sequence of (reference, properties) pairs: each pair was a
            // copy of both (retains and releases) per reference, twice.
            // The keys after the first reference (the order of the checks decides which error a
            // change with several bad names gets, as in the other form); with none, none.
            for index in references.indices {
                try check(references[index])
                if index == references.startIndex { for key in properties.keys { try checkKey(key) } }
            }
            reserveKnown(adding: references.count)
            var ids: [EntityReference: EntityID] = [:]
            for index in references.indices { try setOne(properties, of: references[index], at: datestamp, into: &ids) }
            return ids
        }
    }

    /// Sets different properties on each entity (see `set(_:of:at:)`).
    @discardableResult
    public func set(_ changes: [EntityReference: [String: EntityValue]], at datestamp: Date? = nil) throws -> [EntityReference: EntityID] {
        try operation {
            try EntityError.checkDatestamp(datestamp, "the datestamp of a set")
            for (reference, properties) in changes {
                try check(reference)
                for key in properties.keys { try checkKey(key) }
            }
            reserveKnown(adding: changes.count)
            var ids: [EntityReference: EntityID] = [:]
            for (reference, properties) in changes { try setOne(properties, of: reference, at: datestamp, into: &ids) }
            return ids
        }
    }

    /// Sets one property of the entity `reference` denotes (which may be a get-or-create
    /// reference): appends one entry for `key` at `datestamp` (default: the transaction's), as
    /// `set([key: value], of: [reference], at: datestamp)` does. Returns the entity. The form
    /// for changing one property of one entity: it builds no dictionary of properties, no array of
    /// references and no dictionary of results, which cost that form a tenth of a property change
    /// (callgrind, 100 one-property sets per transaction at 100,000 entities).
    /// - Throws: `EntityError.unresolvedReference` when the reference denotes nothing (or the
    ///   value refers to an entity that does not exist); `EntityError.invalidDatestamp` for a NaN
    ///   datestamp and the size errors before anything is written; `EntityError.valueTooDeep` for
    ///   a value whose arrays nest more than 64 levels deep.
    @discardableResult
    public func set(_ key: String, to value: EntityValue, of reference: EntityReference, at datestamp: Date? = nil) throws -> EntityID {
        try operation {
            try EntityError.checkDatestamp(datestamp, "the datestamp of a set")
            try check(reference)
            try checkKey(key)
            let id = try entityForSetting(reference, withProperties: true)
            try stage(PropertyEntry(value, datestamp: datestamp ?? self.datestamp), key: key, to: id)
            try writeStaged(header: true)
            return id
        }
    }

    /// One change of the `set` forms (every name checked before the first): applied unless its
    /// reference is in `ids` already (a reference met again is skipped: the first one wins),
    /// then the entity is noted in `ids`. (`ids` is not reserved, unlike `resolve`'s: most sets
    /// name one entity, where reserving saves no growth, while a bulk get-or-create through
    /// `resolve` names many.)
    private func setOne(_ properties: [String: EntityValue], of reference: EntityReference, at datestamp: Date?,
                        into ids: inout [EntityReference: EntityID]) throws {
        guard ids.isEmpty || ids[reference] == nil else { return }
        let stamp = datestamp ?? self.datestamp
        let id = try entityForSetting(reference, withProperties: !properties.isEmpty)
        // Distinct keys: staged together, written after the entity's header.
        for (key, value) in properties { try stage(PropertyEntry(value, datestamp: stamp), key: key, to: id) }
        try writeStaged(header: true)
        ids[reference] = id
    }

    /// The entity a `set` changes (`require`). An identifier reference of a change with
    /// properties reads the header for writing first (see `readHeaderForWriting`).
    @inline(__always)
    private func entityForSetting(_ reference: EntityReference, withProperties: Bool) throws -> EntityID {
        guard case .id(let direct) = reference.match, withProperties else { return try require(reference) }
        try readHeaderForWriting(direct)
        // What `require` would find (an identifier resolves to itself when its entity is
        // live), without copying the header out of the table.
        if let slot = knownSlot(direct), !readKnown(at: slot, { $0.header.isDeleted }) { return direct }
        return try require(reference)
    }

    /// Appends full entries (value or removal, datestamp, semantic type label) to the entity's
    /// properties, in the order given per key. For labels and explicit history.
    @discardableResult
    public func add(_ entries: [String: [PropertyEntry]], to reference: EntityReference) throws -> EntityID {
        try operation {
            try check([reference])
            for (key, list) in entries {
                try checkKey(key)
                for entry in list {
                    if let type = entry.type { try checkTypeLabel(type) }
                    try EntityError.checkDatestamp(entry.datestamp, "the datestamp of an added entry")
                }
            }
            let id = try require(reference)
            for key in entries.keys.sorted() { for entry in entries[key]! { try append(entry, key: key, to: id) } }
            return id
        }
    }

    /// Sets `key` of every entity the references denote to a relationship with the entity
    /// `target` denotes (both may be get-or-create references).
    @discardableResult
    public func relate(_ references: [EntityReference], key: String, to target: EntityReference, at datestamp: Date? = nil) throws -> EntityID {
        try operation {
            try EntityError.checkDatestamp(datestamp, "the datestamp of a relate")
            try check(references + [target])
            try checkKey(key)
            let targetID = try require(target)
            try set([key: .entity(targetID)], of: references, at: datestamp)
            return targetID
        }
    }

    /// Removes `keys` from every entity the references denote: appends a removal entry to each
    /// property that has a value (history is kept). Returns the entity of each reference.
    @discardableResult
    public func remove(_ keys: [String], of references: [EntityReference], at datestamp: Date? = nil) throws -> [EntityReference: EntityID] {
        try operation {
            try EntityError.checkDatestamp(datestamp, "the datestamp of a remove")
            for key in keys { try checkKey(key) }
            var ids: [EntityReference: EntityID] = [:]
            for reference in references {
                guard let id = try find(reference) else { throw EntityError.unresolvedReference(reference: reference.description) }
                for key in keys where try latest(id: id, name: EntityLayout.encodedName(key))?.entry.value != nil {
                    try append(PropertyEntry(nil, datestamp: datestamp ?? self.datestamp), key: key, to: id)
                }
                ids[reference] = id
            }
            return ids
        }
    }

    /// Appends `entry` to property `key` of entity `id` and keeps the header's current entries and
    /// the indexes exact; the history entry is written before it returns.
    /// `isNew`: the entity was created in this operation with no entry for `key` yet, so there
    /// is no previous entry to look up.
    func append(_ entry: PropertyEntry, key: String, to id: EntityID, isNew: Bool = false) throws {
        try stage(entry, key: key, to: id, isNew: isNew)
        try writeStaged(header: false)
    }

    /// The body of the entry `stage` appends, and the encoded value `index` adds: buffers
    /// reused for every entry (read only before anything else can stage or index).
    @exclusivity(unchecked) private var bodyWriter = OrderedKeyWriter(reservingCapacity: 32)
    @exclusivity(unchecked) private var valueWriter = OrderedKeyWriter(reservingCapacity: 32)

    /// `append`, but the history entry is staged (see `stagedEntity`): the caller writes it with
    /// `writeStaged` before it appends to another key of the entity that may already be staged,
    /// or reads the entity's history. Staging for another entity writes the staged entries first.
    private func stage(_ entry: PropertyEntry, key: String, to id: EntityID, isNew: Bool = false) throws {
        try stage(entry, number: nameNumber(key), to: id, isNew: isNew)
    }

    /// `stage` for key number `number` of the key table. `sortsLast` (with `isNew`): the key
    /// sorts after every entry the header holds.
    private func stage(_ entry: PropertyEntry, number: Int, to id: EntityID, isNew: Bool = false, sortsLast: Bool = false) throws {
        // Every stored value passes here: an array nested deeper than any reader decodes is
        // refused before its entry is staged (one branch for any other value). Checked here
        // rather than with the names: the values are at hand, and any error fails the write.
        if case .array? = entry.value { try checkDepth(of: entry, number: number) }
        if let stagedEntity, stagedEntity != id { try writeStaged(header: true) }
        let name = names[number].encoded
        let sequence = try nextSequence()
        bodyWriter.removeAll()
        entry.encodeBody(into: &bodyWriter)
        let slot = try knownIndex(of: id)
        // The entity is changed in place (`inout`): reading it out of the table would copy it.
        let (previous, isCurrent) = try bodyWriter.bytes.withUnsafeBytes { body in
            try Self.noteEntry(in: &known.values[slot], name: name, number: number, datestamp: entry.datestamp, sequence: sequence,
                               body: body, isNew: isNew, sortsLast: sortsLast)
        }
        // The history key (`EntityLayout.historyKey`) in one piece, then the body straight from
        // its buffer: a body may be megabytes, which a piece would copy once more.
        stagedEntity = id
        stagedBytes.appendParts(count: 32 + name.count) { cursor in
            cursor.writeID(id)
            cursor.write(name)
            cursor.writeOrderedDate(entry.datestamp)
            cursor.writeBigEndian(sequence)
        }
        let keyEnd = stagedBytes.count
        stagedBytes.appendBytes(bodyWriter.bytes)
        stagedEntries.append((keyEnd, stagedBytes.count))
        guard isCurrent else { return }
        // Only a current value must not dangle; an older entry may name a deleted entity
        // (history imported from an export keeps those).
        if let value = entry.value {
            if deferredTargets != nil {
                deferredTargets!.formUnion(value.referencedEntities)
            } else {
                for target in value.referencedEntities where try liveHeader(target) == nil {
                    throw EntityError.unresolvedReference(reference: "relationship '\(names[number].key)' of \(id) to \(target)")
                }
            }
        }
        // The superseded value's `values` entry stays: it is stale (its sequence is no longer
        // the current entry's), queries skip it and compaction removes it (see `EntityLayout`).
        if let previous, previous.mayRefer {
            let old = if let stored = previous.body {
                try stored.withUnsafeBytes { try PropertyEntry.decodeBody($0, datestamp: previous.datestamp) }
            } else {
                try historyEntry(id: id, name: name, datestamp: previous.datestamp, sequence: previous.sequence)
            }
            if let value = old.value { try unindexReferences(value, name: name, id: id) }
        }
        if let new = entry.value { try index(new, name: name, id: id, sequence: sequence) }
    }

    /// The key's current entry before a new one (superseded if the new one is current), as
    /// `stage` needs it (`body` only for a value that may refer to entities).
    private typealias SupersededEntry = (datestamp: Date, sequence: UInt64, body: [UInt8]?, mayRefer: Bool)

    /// Notes in `entity` a new entry of key `name` (number `number` of the key table): makes it
    /// the current entry (in the header, which is then written after the operation is done with
    /// the entity) unless a newer datestamp exists. Returns the key's current entry before this
    /// one (the entry it superseded when it is current; otherwise the newer entry that stays
    /// current) and whether it is current. `isNew`: the key has no entry yet; `sortsLast` (with
    /// `isNew`): its key sorts after every entry of the header, so its place is the end.
    private static func noteEntry(in entity: inout KnownEntity, name: [UInt8], number: Int, datestamp: Date, sequence: UInt64,
                                  body: UnsafeRawBufferPointer, isNew: Bool, sortsLast: Bool) throws -> (previous: SupersededEntry?, isCurrent: Bool) {
        // The previous current entry, read before the header changes: its datestamp decides
        // whether the new entry is current, and a value that may refer to entities (only those
        // are decoded) leaves the reverse index.
        let located = isNew && sortsLast ? entity.header.endLocation : try entity.header.locateCurrent(named: name)
        var previous: SupersededEntry?
        if !isNew {
            previous = try entity.header.withCurrentEntry(at: located) { stored in
                guard let stored else { return nil }
                let mayRefer = stored.body.map(PropertyEntry.mayReferToEntities) ?? true
                return (stored.datestamp, stored.sequence, mayRefer ? stored.body.map { Array($0) } : nil, mayRefer)
            }
        }
        // The new entry is current unless a newer datestamp exists (its sequence is the highest).
        // Written as "not newer", on the intervals (IEEE comparisons, not `Date`'s derived
        // operators), so that a NaN datestamp already stored (an older build wrote them; this one
        // refuses them at every write) is superseded, never current forever; the same for a NaN
        // `modified`. `datestamp` itself is never NaN here.
        let stamp = datestamp.timeIntervalSinceReferenceDate
        let isCurrent = previous.map { !($0.datestamp.timeIntervalSinceReferenceDate > stamp) } ?? true
        if isCurrent {
            entity.header.setCurrent(name: name, datestamp: datestamp, sequence: sequence, body: body, at: located)
            if !(entity.header.modified.timeIntervalSinceReferenceDate >= stamp) { entity.header.modified = datestamp }
            entity.headerChanged = true
        }
        entity.noteEntry(key: number)
        return (previous, isCurrent)
    }

    /// The `values` key of `value` set by entry `sequence`: `EntityLayout.indexedValue` built in
    /// one buffer.
    private func valueIndexKey(_ value: EntityValue, name: [UInt8], sequence: UInt64) -> (key: [UInt8], truncated: Bool) {
        var writer = OrderedKeyWriter(reservingCapacity: name.count + 24 + EntityLayout.sequenceBytes)
        name.withUnsafeBytes { writer.writeFixedWidthBytes($0) }
        EntityValueCoding.encode(value, into: &writer)
        var key = writer.bytes
        let room = maximumKeySize - name.count - EntityLayout.sequenceBytes
        let truncated = key.count - name.count > room
        if truncated { key.removeLast(key.count - name.count - room) }
        withUnsafeBytes(of: sequence.bigEndian) { key.append(contentsOf: $0) }
        return (key, truncated)
    }

    /// Adds the index entries of `value`, the current value of property `name` of `id`, set by
    /// the entry numbered `sequence` (the `values` entry is kept back: `indexEntries`).
    private func index(_ value: EntityValue, name: [UInt8], id: EntityID, sequence: UInt64) throws {
        // `valueIndexKey`, written straight into the buffer.
        valueWriter.removeAll()
        EntityValueCoding.encode(value, into: &valueWriter)
        let room = maximumKeySize - name.count - EntityLayout.sequenceBytes
        let truncated = valueWriter.bytes.count > room
        let start = indexBytes.count
        let indexed = truncated ? room : valueWriter.bytes.count
        let keyEnd = start + name.count + indexed + EntityLayout.sequenceBytes
        indexBytes.appendParts(count: keyEnd - start + 16 + (truncated ? 1 : 0)) { cursor in
            cursor.write(name)
            valueWriter.bytes.withUnsafeBytes { cursor.write(UnsafeRawBufferPointer(rebasing: $0[..<indexed])) }
            cursor.writeBigEndian(sequence)
            cursor.writeID(id)
            if truncated { cursor.writeByte(EntityLayout.truncatedMark) }
        }
        let head = indexBytes.withUnsafeBytes { raw in
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[start..<min(keyEnd, start + 16)])) }
            return (UInt64(bigEndian: words.0), UInt64(bigEndian: words.1))
        }
        indexEntries.append((start, keyEnd, indexBytes.count, head))
        let targets = value.referencedEntities
        if !targets.isEmpty {
            let references = try writableTree(EntityLayout.references)
            for target in Set(targets) { try write.put(target.bytes + name + id.bytes, [], in: references) }
        }
    }

    /// Removes the index entries `index(_:name:id:sequence:)` added.
    private func unindex(_ value: EntityValue, name: [UInt8], id: EntityID, sequence: UInt64) throws {
        try flushValueIndex()
        try write.delete(valueIndexKey(value, name: name, sequence: sequence).key, in: try writableTree(EntityLayout.values))
        try unindexReferences(value, name: name, id: id)
    }

    /// Removes the `references` entries of `value`, a value of property `name` of `id` that is
    /// no longer current (the reverse index is kept exact: it has no sequence to tell stale ones).
    private func unindexReferences(_ value: EntityValue, name: [UInt8], id: EntityID) throws {
        let targets = value.referencedEntities
        if !targets.isEmpty {
            let references = try writableTree(EntityLayout.references)
            for target in Set(targets) { try write.delete(target.bytes + name + id.bytes, in: references) }
        }
    }

    // MARK: Deleting

    /// Deletes the entities the references denote, with their whole history and index entries
    /// (value index entries of values they no longer had stay until `compactHistory`; queries
    /// never return them).
    ///
    /// The rule for relationships: every property of another entity whose current value refers
    /// to a deleted entity gets a new entry without it, dated `datestamp` (or its current
    /// entry's datestamp when that is later, so the new entry is the current one): a single relationship
    /// becomes a removal, an array loses the element. The report lists those properties (and
    /// the deleted entities); nothing is left dangling. A deleted entity's identifier keeps a
    /// marker: a reference to it resolves to nothing and it is never created again.
    @discardableResult
    public func delete(_ references: [EntityReference], at datestamp: Date? = nil) throws -> EntityDeletionReport {
        try operation {
            try EntityError.checkDatestamp(datestamp, "the datestamp of a delete")
            let stamp = datestamp ?? self.datestamp
            var deleted: [EntityID] = []
            var detached: [EntityLink] = []
            for reference in references {
                guard let id = try find(reference), var header = try liveHeader(id) else { continue }
                try removeOwnData(of: id, header: header)
                header.isDeleted = true
                header.modified = stamp
                header.setCurrentEntries([])
                setPending(header, of: id)
                resolved = resolved.filter { $0.value != id }
                try note(id, .deleted)
                deleted.append(id)
                for link in try links(to: id, through: nil) {
                    guard let current = try latest(id: link.source, name: EntityLayout.encodedName(link.key))?.entry,
                          let value = current.value else { continue }
                    // Dated no earlier than the current entry, so it becomes the current one.
                    let remaining = value.removingReferences(to: id)
                    try append(PropertyEntry(remaining, datestamp: max(stamp, current.datestamp), type: current.type), key: link.key, to: link.source)
                    detached.append(link)
                }
            }
            let gone = Set(deleted)
            return EntityDeletionReport(deleted: deleted, detached: detached.filter { !gone.contains($0.source) })
        }
    }

    /// Removes the entity's history, index entries and type entry (its header, with the current
    /// entries, is the caller's to rewrite as a deletion marker).
    private func removeOwnData(of id: EntityID, header: RecordHeader) throws {
        let idBytes = id.bytes
        let upper = OrderedKeyWriter.prefixUpperBound(of: idBytes)
        for (key, latest) in try latestEntries(id: id) {
            if let value = latest.entry.value { try unindex(value, name: EntityLayout.encodedName(key), id: id, sequence: latest.sequence) }
        }
        // Every entry but the header (rewritten as deleted at the end of the transaction).
        if let entries = try tree(EntityLayout.entries) {
            var keys: [[UInt8]] = []
            try write.scan(entries, from: EntityLayout.headerKey(id) + [0], to: upper) { key, _ in keys.append(key.bytes); return true }
            for key in keys { try write.delete(key, in: entries) }
        }
        try write.delete(EntityLayout.typeKey(header.type, sequence: header.sequence), in: try writableTree(EntityLayout.types))
    }

    // MARK: Compaction

    /// Drops superseded history: for every property, of its entries dated before `date` only
    /// the newest is kept (it is the value as of `date`); entries from `date` on are all kept,
    /// so the current value is never dropped. Returns how many entries were dropped.
    /// Also removes the value index's stale entries (values no longer current, which queries skip).
    /// - Throws: `EntityError.invalidDatestamp` when `date` is NaN (nothing is dropped).
    @discardableResult
    public func compactHistory(before date: Date) throws -> Int {
        try operation {
            try EntityError.checkDatestamp(date, "the compaction date")
            guard let history = try tree(EntityLayout.entries) else { return 0 }
            var dropped: [[UInt8]] = []
            var group: [UInt8] = []
            var olderInGroup: [UInt8]?
            try write.scan(history) { key, _ in
                if key.count == 18 { return true } // a header
                let stamp = try key.withUnsafeBytes { try EntityLayout.historyDatestamp(of: $0) }
                let prefix = Array(key[0..<(key.count - 16)])
                if prefix != group {
                    group = prefix
                    olderInGroup = nil
                }
                if stamp < date {
                    if let superseded = olderInGroup { dropped.append(superseded) }
                    olderInGroup = key.bytes
                }
                return true
            }
            for key in dropped { try write.delete(key, in: history) }
            try removeStaleIndexEntries()
            return dropped.count
        }
    }

    /// Deletes every `values` entry that is not its entity's current entry (see `EntityLayout`):
    /// a pass over the index with a header lookup per entry.
    private func removeStaleIndexEntries() throws {
        try flushValueIndex()
        guard let values = try tree(EntityLayout.values) else { return }
        var stale: [[UInt8]] = []
        var lastName: [UInt8] = [] // the encoded key of the previous entry: runs of one key
        try write.scan(values) { key, value in
            guard key.count > EntityLayout.sequenceBytes, value.count == 16 || value.count == 17 else {
                throw EntityError.corrupt(reason: "value index entry of \(key.count) + \(value.count) bytes")
            }
            let name: [UInt8] = try key.withUnsafeBytes { raw in
                var reader = OrderedKeyReader(raw)
                try reader.skipEscaped(reading: "index key name")
                let prefix = UnsafeRawBufferPointer(rebasing: raw[0..<reader.offset])
                if !lastName.withUnsafeBytes({ RecordHeader.equal($0, prefix) }) { lastName = Array(prefix) }
                return lastName
            }
            let id = value.withUnsafeBytes { EntityID(bytes: $0, at: 0) }
            let sequence = key.withUnsafeBytes { EntityLayout.trailingSequence(of: $0) }
            if try indexState(of: id, name: name)?.sequence != sequence { stale.append(key.bytes) }
            return true
        }
        for key in stale { try write.delete(key, in: values) }
    }
}

/// What `delete` did.
public struct EntityDeletionReport: Hashable, Sendable {
    /// The entities deleted (those that existed).
    public let deleted: [EntityID]
    /// Properties of remaining entities that referred to a deleted entity and got a new entry
    /// without it (a removal, or an array without the element).
    public let detached: [EntityLink]
}

extension EntityValue {
    /// This value without references to `id`: nil when it is one, an array without those elements.
    func removingReferences(to id: EntityID) -> EntityValue? {
        switch self {
        case .entity(let target): return target == id ? nil : self
        case .array(let elements): return .array(elements.compactMap { $0.removingReferences(to: id) })
        default: return self
        }
    }
}
