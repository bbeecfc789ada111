/// What one write transaction knows of an entity it read or changed: its header as read or
/// changed, whether that header still has to be written, and what the transaction did to the
/// entity (for the change log). One record per entity, so an append finds all of it with one
/// hash lookup.
struct KnownEntity {
    var header: RecordHeader
    /// The header differs from the stored one (it is written before the transaction ends).
    var headerChanged: Bool
    /// What the transaction did to the entity; nil while it only read it.
    var change: EntityChange.Kind?
    /// The keys that got entries, as numbers of the transaction's key table (see
    /// `EntityWriteContext.nameNumber`): a bit each for the first 64 keys, a list beyond. Why not
    /// a set of strings: noting a key would allocate a set and hash the key on every append.
    private var keyBits: UInt64 = 0
    private var moreKeys: [Int] = []

    init(header: RecordHeader, headerChanged: Bool) {
        self.header = header
        self.headerChanged = headerChanged
    }

    /// Adds `later` to what the transaction did (the rule of `EntityChange.absorb`: created stays
    /// created unless deleted, deleted wins).
    mutating func noteChange(_ later: EntityChange.Kind) {
        switch (change, later) {
        case (_, .deleted): change = .deleted
        case (.created?, _): break
        default: change = later
        }
    }

    /// Notes an entry for key number `key` (and that the entity was updated).
    mutating func noteEntry(key: Int) {
        noteChange(.updated)
        if key < 64 {
            keyBits |= 1 << UInt64(key)
        } else if !moreKeys.contains(key) {
            moreKeys.append(key)
        }
    }

    /// Calls `body` with the number of each key that got entries, in no particular order.
    func forEachChangedKey(_ body: (Int) -> Void) {
        var bits = keyBits
        while bits != 0 {
            body(bits.trailingZeroBitCount)
            bits &= bits - 1
        }
        for key in moreKeys { body(key) }
    }
}
