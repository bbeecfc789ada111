import StrataCore

/// What one write changes in one index: the values whose entries go, the values whose entries
/// are written, and the values a unique index must check (new to this instance).
struct IndexValueDiff {
    let removed: IndexValueList
    let added: IndexValueList
    let checked: IndexValueList

    /// An index with one value per instance, when the instance with value `new` replaces the one
    /// with value `old` (nil: a new instance). Nil if the index does not change.
    static func single(_ new: [UInt8], replacing old: [UInt8]?, isDirect: Bool) -> IndexValueDiff? {
        guard let old else { return IndexValueDiff(removed: .empty, added: .one(new), checked: .one(new)) }
        guard old != new else {
            // A direct index keeps a copy of the instance in each entry: rewrite it.
            return isDirect ? rewrite(new) : nil
        }
        return IndexValueDiff(removed: .one(old), added: .one(new), checked: .one(new))
    }

    /// A direct index whose one value `value` did not change: its entry holds a copy of the
    /// instance, so it is rewritten (nothing removed, nothing to check).
    static func rewrite(_ value: [UInt8]) -> IndexValueDiff {
        IndexValueDiff(removed: .empty, added: .one(value), checked: .empty)
    }

    /// Any index (`new` and `old` sorted and without duplicates, as `encodedValues` gives them).
    static func many(_ new: [[UInt8]], replacing old: [[UInt8]]?, isDirect: Bool) -> IndexValueDiff? {
        guard let old else { return new.isEmpty ? nil : IndexValueDiff(removed: .empty, added: .many(new), checked: .many(new)) }
        guard old != new else {
            guard isDirect, !new.isEmpty else { return nil }
            return IndexValueDiff(removed: .empty, added: .many(new), checked: .empty)
        }
        let fresh = new.filter { !old.contains($0) }
        let removed = old.filter { !new.contains($0) }
        let added = isDirect ? new : fresh
        guard !added.isEmpty || !removed.isEmpty else { return nil }
        return IndexValueDiff(removed: .many(removed), added: .many(added), checked: .many(fresh))
    }
}

/// The encoded values on one side of an `IndexValueDiff`. Most indexes have one value per instance:
/// that value is held without an array around it (one allocation less per index and write).
enum IndexValueList {
    case one([UInt8])
    case many([[UInt8]])

    static let empty = IndexValueList.many([])

    var isEmpty: Bool {
        switch self {
        case .one: false
        case .many(let values): values.isEmpty
        }
    }

    func forEach(_ body: ([UInt8]) throws -> Void) rethrows {
        switch self {
        case .one(let value): try body(value)
        case .many(let values): for value in values { try body(value) }
        }
    }
}

/// One index entry a write removes or adds: its key (`value ++ identifier`) is
/// `WriteScratch.keys[keyStart..<keyEnd]`, its tree the one of the index at `indexPosition`
/// (opened while the entries were collected, see `DatastoreTrees.openedIndex(at:)`).
///
/// Plain values only (no references, no arrays): the list of a write's entries is built and
/// walked without retaining or releasing anything per entry. (Declared outside the generic
/// writer on purpose: a type nested in it has its metadata looked up at run time per write.)
struct IndexEntryChange {
    let indexPosition: Int
    let isRemoval: Bool
    let isDirect: Bool
    let keyStart: Int
    let keyEnd: Int
}

/// Buffers a write context reuses from one write to the next, so that a write allocates no array
/// for its list of index changes or for the index keys it builds.
///
/// A write collects every index entry it changes here before it writes any (so a refused unique
/// check changes no entry): the entries in the order they are applied
/// (each tree's removals before its additions), and all their keys back to back in one byte
/// buffer.
///
/// A write takes the buffers (`take`) and gives them back emptied (`give`); a write that starts
/// while another holds them (user code re-entering the datastore from an `encode(to:)`) takes
/// fresh ones, so two writes never share a buffer.
struct WriteScratch {
    var entries: [IndexEntryChange] = []
    var keys: [UInt8] = []

    /// Bytes the buffers hold on to, about (`WriteContextReuse` does not keep large ones).
    var capacityInBytes: Int { entries.capacity * MemoryLayout<IndexEntryChange>.stride + keys.capacity }

    mutating func take() -> WriteScratch {
        var taken = WriteScratch()
        swap(&taken, &self)
        return taken
    }

    mutating func give(_ scratch: inout WriteScratch) {
        scratch.entries.removeAll(keepingCapacity: true)
        scratch.keys.removeAll(keepingCapacity: true)
        swap(&scratch, &self)
    }

    /// Records the entries of `change` in the index at `position`: its removals, then its additions.
    mutating func record(_ change: IndexValueDiff, ofIndexAt position: Int, isDirect: Bool, idBytes: [UInt8]) {
        change.removed.forEach { append($0, idBytes, position: position, isRemoval: true, isDirect: isDirect) }
        change.added.forEach { append($0, idBytes, position: position, isRemoval: false, isDirect: isDirect) }
    }

    /// Writes a value at the end of `keys` with `write` (no array of its own); returns where its
    /// bytes are. `appendAddition(ofValueAt:…)` completes it into an added entry's key.
    /// `write` runs a user's `encodeOrderedKey(into:)`, which must only append: nil if it dropped
    /// the keys before its value (cleared or replaced the writer), which are then lost, so the
    /// caller must abandon this write's changes (and throw).
    mutating func appendValue(_ write: (inout OrderedKeyWriter) -> Void) -> Range<Int>? {
        let start = keys.count
        var writer = OrderedKeyWriter(borrowing: &keys)
        write(&writer)
        guard writer.returnBytes(to: &keys, lent: start) else { return nil }
        return start..<keys.count
    }

    /// Records the addition to the index at `position` of the entry whose value `appendValue`
    /// just wrote at `value` (the last bytes of `keys`): its key is that value then `idBytes`.
    mutating func appendAddition(ofValueAt value: Range<Int>, _ idBytes: [UInt8], position: Int, isDirect: Bool) {
        keys.append(contentsOf: idBytes)
        entries.append(IndexEntryChange(indexPosition: position, isRemoval: false, isDirect: isDirect, keyStart: value.lowerBound, keyEnd: keys.count))
    }

    private mutating func append(_ value: [UInt8], _ idBytes: [UInt8], position: Int, isRemoval: Bool, isDirect: Bool) {
        let start = keys.count
        keys.append(contentsOf: value)
        keys.append(contentsOf: idBytes)
        entries.append(IndexEntryChange(indexPosition: position, isRemoval: isRemoval, isDirect: isDirect, keyStart: start, keyEnd: keys.count))
    }
}
