import StrataCore

/// The index entries one write removes from and adds to one index tree: each value's key is
/// `value ++ identifier`.
///
/// Declared outside the generic writer on purpose: an array of tuples holding a generic
/// `IndexInfo` (or of a type nested in the generic class) has its type metadata looked up at run
/// time on every write.
struct IndexChange {
    let tree: Tree
    let isDirect: Bool
    let removed: IndexValueList
    let added: IndexValueList
}

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
            return isDirect ? IndexValueDiff(removed: .empty, added: .one(new), checked: .empty) : nil
        }
        return IndexValueDiff(removed: .one(old), added: .one(new), checked: .one(new))
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

/// The encoded values on one side of an `IndexChange`. Most indexes have one value per instance:
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

/// Buffers a write context reuses from one write to the next, so that a write allocates no array
/// for its list of index changes or for the index keys it builds.
///
/// A write takes the buffers (`take`) and gives them back emptied (`give`); a write that starts
/// while another holds them (user code re-entering the datastore from an `encode(to:)`) takes
/// fresh ones, so two writes never share a buffer.
struct WriteScratch {
    var changes: [IndexChange] = []
    var key: [UInt8] = []

    mutating func take() -> WriteScratch {
        var taken = WriteScratch()
        swap(&taken, &self)
        return taken
    }

    mutating func give(_ scratch: inout WriteScratch) {
        scratch.changes.removeAll(keepingCapacity: true)
        scratch.key.removeAll(keepingCapacity: true)
        swap(&scratch, &self)
    }

    /// `key = value ++ idBytes`, in the reused key buffer.
    mutating func join(_ value: [UInt8], _ idBytes: [UInt8]) {
        key.removeAll(keepingCapacity: true)
        key.reserveCapacity(value.count + idBytes.count)
        key.append(contentsOf: value)
        key.append(contentsOf: idBytes)
    }
}
