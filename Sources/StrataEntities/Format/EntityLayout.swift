import Foundation
import Strata
import StrataCore

/// The trees of an entity store and the byte layout of their keys and values. Every tree name
/// starts with `entities.`, so an entity store can share a store with typed datastores.
///
/// | tree | key | value |
/// |---|---|---|
/// | entries | id, `headerName` | `RecordHeader` (live or deleted, created, modified, creation sequence, type, current entries) |
/// | entries | id, key, datestamp, sequence | entry body (label, value or tombstone) |
/// | types | type, creation sequence | id |
/// | values | key, value, sequence of the entry that set it | id, then `truncatedMark` when the value was cut to fit |
/// | references | target id, key, source id | empty |
/// | log | generation | the commit's changes (see `EntityChangeLog`) |
/// | meta | name | the next sequence number |
///
/// `id` is the 16 UUID bytes; `key` and `type` are ordered strings (escaped, terminated);
/// `value` is `EntityValueCoding`; datestamps are ordered doubles; the sequence is a big-endian
/// `UInt64` that grows with every entry (and every entity) ever written, so equal datestamps keep
/// insertion order.
///
/// Why the indexes end in a sequence number and not the identifier: identifiers a caller chooses
/// are often random (the store's own are time-ordered: `EntityID.timeOrdered()`), so
/// an index ordered by them puts every new entry on a random leaf, and a transaction that creates
/// a thousand entities would copy and write a leaf of every index for most of them. Ordered by
/// sequence, entities of one type and entities with one value are appended at the end of their
/// group: a bulk create writes a few leaves per index. (The identifier is the index entry's value.)
/// So `entities(ofType:)` lists entities in creation order, and a value query orders equal
/// values by when they were set.
///
/// Why one `entries` tree for an entity's header and its whole history: everything about one
/// entity is contiguous, usually on one leaf. Setting a property dirties that leaf once (the new
/// entry and the rewritten header land there). A create or a `set` puts the header first, then
/// the new history entries (which sort after it): the engine remembers the header's leaf, so the
/// entries after it skip the descent (see `EntityWriteContext.stagedEntity`); `add`, `remove`,
/// an import and the link removals of a delete put their entries as they go and the header
/// when the operation finishes. This is an order
/// of writes, not a change of layout: stores of layouts 2 and 3 read and write as before.
///
/// Why the headers are not a tree of their own (a prototype measured on 2026-11-25, not
/// adopted): reads search random leaves of `entries`, whose history entries make it several
/// times the size of the headers alone. With the headers in a tree of their own, reads per CPU
/// second rose about 10-40%, but a `set` dirties two random leaves (the header's and the new
/// history entry's) instead of one: per CPU second updates fell about 40%, get-or-create
/// resolves about 30% and creates about 25% (callgrind at 20,000 entities, instructions per
/// operation: update 40.8k -> 50.6k, resolve 46.2k -> 52.4k, create 84.6k -> 89.1k, read 8.92k
/// -> 8.53k: reads gain in cache misses, not instructions). Keeping a header next to its
/// history is what makes a write one leaf. A smaller `entries` tree can come from writing less
/// history instead: a second prototype wrote a current entry whose body the header holds into the
/// header only (the entry it supersedes moving into the history then), so a create writes no
/// history entries and the tree holds headers and superseded entries. Per CPU second creates
/// rose about 25-35%, updates 10-20%, reads 10-20% and resolves about 10%, and history reads
/// fell about 30% (they read the header too: 7.2k -> 11.9k instructions per entity); creates
/// 84.6k -> 69.6k, updates 40.8k -> 38.0k instructions. That would be a new layout (history
/// ranges no longer hold every entry) with an upgrade; not built yet.
///
/// The current entry of a key is the last entry of its range (entries sort by datestamp, then
/// sequence), and the header keeps a copy of each current entry (see `RecordHeader`), so
/// reading an entity is one lookup of its header and a
/// write finds the entry it supersedes there. The header's key sorts before every property of
/// the entity: `headerName` is the encoding of the empty string, and property keys are never
/// empty. The header's current entries and the `types`, `values` and `references` indexes are
/// derived: they follow from the history and every write keeps them in the same transaction.
///
/// Why the `values` index is lazy: a write adds the entry of the new current value but leaves
/// the superseded value's entry (stale) instead of deleting it, because that delete lands on a
/// random leaf of the index (the old value's place) and would cost every property change a
/// second copied leaf. An entry is current exactly when its trailing sequence is the sequence
/// of its entity's current entry of that key (the header holds it), so a query checks that and
/// skips stale entries (and those of deleted entities); `compactHistory` removes them. The
/// header, `types` and `references` are kept exact.
enum EntityLayout {
    static let entries = "entities.entries"
    /// The key part naming the header (the ordered encoding of "").
    static let headerName: [UInt8] = [headerNamePair.0, headerNamePair.1]
    /// `headerName` as the fixed pair the header key ends with (`withHeaderKey`).
    private static let headerNamePair: (UInt8, UInt8) = (0, 0)
    /// A header key's bytes in memory: the identifier, then `headerName`; bytes only, so no padding.
    private typealias HeaderKey = (id: uuid_t, name: (UInt8, UInt8))
    static let types = "entities.types"
    static let values = "entities.values"
    static let references = "entities.references"
    static let log = "entities.log"
    static let meta = "entities.meta"
    static let sequenceName = "sequence"

    /// The layout this build reads and writes, stored in `meta` under `versionName`. Layout 1
    /// (before current entries moved into the header and the indexes ended in sequence numbers)
    /// had no version: its headers would decode into wrong labels silently, so a store with
    /// entities but without this version is refused. Layout 3 made the `values` index lazy
    /// (stale entries): a build of layout 2 would return them from queries, so the version says so.
    /// A layout-2 store is read as it is (its exact index is a valid lazy one, and nothing else
    /// changed) and states layout 3 with its first commit that takes a sequence number, which
    /// every change able to leave a stale entry does.
    static let version: UInt64 = 3
    /// Layouts this build reads besides `version`.
    static let upgradable: Set<UInt64> = [2]
    static let versionName = "layout"
    static let versionBytes: [UInt8] = withUnsafeBytes(of: version.bigEndian) { Array($0) }

    /// Throws `EntityError.unsupportedLayout` if the store holds entities written in another
    /// layout. A store without entities passes (the first commit that creates one writes the
    /// version with it).
    static func checkVersion(in transaction: Transaction) throws {
        guard try transaction.treeIfPresent(entries) != nil else { return }
        let stored = try transaction.treeIfPresent(meta).flatMap { try transaction.get(versionName, in: $0) }
        guard let stored else { throw EntityError.unsupportedLayout(found: 1, supported: version) }
        guard stored.count == 8 else { throw EntityError.corrupt(reason: "layout version of \(stored.count) bytes") }
        let found = stored.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
        guard found == version || upgradable.contains(found) else {
            throw EntityError.unsupportedLayout(found: found, supported: version)
        }
    }

    static let truncatedMark: UInt8 = 1
    /// The bytes of a sequence number in index keys.
    static let sequenceBytes = 8
    /// Room kept in every key for the parts that are not the user's key or label (ids,
    /// datestamp, sequence, and at least this many bytes of an indexed value).
    static let reservedKeyBytes = 96

    /// The longest encoded property key or type label allowed in a store with `maximumKeySize`.
    static func maximumNameBytes(maximumKeySize: Int) -> Int { maximumKeySize - reservedKeyBytes }

    /// The ordered encoding of a property key or type label.
    static func encodedName(_ name: String) -> [UInt8] {
        var writer = OrderedKeyWriter(reservingCapacity: name.utf8.count + 2)
        writer.write(name)
        return writer.bytes
    }

    /// Shows the header key of `id` (`headerKeyWidth` bytes: the identifier, then `headerName`),
    /// built on the stack, to `body`. Every header key is built here (`headerKey`, `headerKeys`,
    /// the write path's lookups and puts).
    @inline(__always)
    static func withHeaderKey<Result>(_ id: EntityID, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let key: HeaderKey = (id.uuid.uuid, headerNamePair)
        return try Swift.withUnsafeBytes(of: key, body)
    }

    static func headerKey(_ id: EntityID) -> [UInt8] { withHeaderKey(id) { Array($0) } }

    /// The 16 bytes of `id` followed by `suffix`, in one allocation.
    static func key(_ id: EntityID, _ suffix: [UInt8]) -> [UInt8] {
        var key: [UInt8] = []
        key.reserveCapacity(16 + suffix.count)
        key.appendID(id)
        key.appendBytes(suffix)
        return key
    }

    /// The width of every header key: an identifier and `headerName`.
    static let headerKeyWidth = MemoryLayout<HeaderKey>.size

    /// The header keys of `count` identifiers (`id(n)` for n in `0..<count`), one after the other
    /// in one buffer of `count * headerKeyWidth` bytes: the keys of a batched lookup
    /// (`Transaction.forEachValue(ofKeysIn:width:in:_:)`), built in one allocation.
    static func headerKeys(count: Int, id: (Int) -> EntityID) -> [UInt8] {
        let width = headerKeyWidth
        return [UInt8](unsafeUninitializedCapacity: count * width) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            for index in 0..<count {
                let start = index * width
                withHeaderKey(id(index)) { UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + width)]).copyMemory(from: $0) }
            }
            initialized = count * width
        }
    }

    static func historyKey(id: [UInt8], name: [UInt8], datestamp: Date, sequence: UInt64) -> [UInt8] {
        var key = id + name
        key.reserveCapacity(key.count + 16)
        var writer = OrderedKeyWriter(reservingCapacity: 16)
        writer.write(datestamp)
        writer.writeBigEndian(sequence)
        key.append(contentsOf: writer.bytes)
        return key
    }

    static func sequenceBytes(_ sequence: UInt64) -> [UInt8] { withUnsafeBytes(of: sequence.bigEndian) { Array($0) } }

    /// The big-endian sequence number that ends an index key (the caller checked the length).
    static func trailingSequence(of key: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(bigEndian: key.loadUnaligned(fromByteOffset: key.count - sequenceBytes, as: UInt64.self))
    }

    /// A `types` index key.
    static func typeKey(_ type: String, sequence: UInt64) -> [UInt8] { encodedName(type) + sequenceBytes(sequence) }

    /// Decodes the datestamp of a history key (the 8 bytes before its sequence).
    static func historyDatestamp(of key: UnsafeRawBufferPointer) throws -> Date {
        guard key.count >= 32 else { throw EntityError.corrupt(reason: "history key of \(key.count) bytes") }
        var reader = OrderedKeyReader(UnsafeRawBufferPointer(rebasing: key[(key.count - 16)..<(key.count - 8)]))
        return try reader.read(Date.self)
    }

    /// The bytes of a `values` index key for `value`: the full encoding when it fits in the
    /// room the key leaves, else its first bytes (then the entry is marked truncated and a
    /// query compares the entity's stored value instead). Truncation keeps the order weakly
    /// (a prefix of a smaller encoding is never greater), so range scans still find every match.
    static func indexedValue(_ encoded: [UInt8], name: [UInt8], maximumKeySize: Int) -> (bytes: [UInt8], truncated: Bool) {
        let room = maximumKeySize - name.count - sequenceBytes
        return encoded.count <= room ? (encoded, false) : (Array(encoded.prefix(room)), true)
    }
}
