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
    let removed: [[UInt8]]
    let added: [[UInt8]]
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
