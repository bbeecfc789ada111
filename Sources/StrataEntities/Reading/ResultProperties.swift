import Foundation

/// Builds the `properties` dictionary of each record a bulk read returns (`records(_:keys:)`)
/// without hashing a key: every record of one read asks for the same keys, so one template
/// dictionary holding those keys is made per read, each record starts as a copy of it, and
/// its values are stored by position.
///
/// Why this is safe: a copy of a dictionary keeps its storage's layout (the same buckets, seed
/// and age), so a position taken in the template names the same key in the copy; a position
/// that did not would trap, never store under another key. Why it is cheaper: inserting three
/// entries into a fresh dictionary hashed three strings and probed, while the copy is one
/// allocation and the stores are plain writes. Keys a record lacks (no such property, or a
/// removal) are removed before the record is handed out, so the template's placeholder value
/// never leaves this type.
struct ResultProperties {
    let keys: WantedKeys
    private let template: [String: PropertyEntry]
    /// The position of each wanted key (by its number in `keys`) in `template` and its copies.
    private let positions: [Dictionary<String, PropertyEntry>.Index]
    private var current: [String: PropertyEntry] = [:]
    /// How many keys the current record got. Which ones: those whose value is not nil, as `set`
    /// is given only values and the placeholder has none (a flag array per key cost a copy of
    /// that array per record).
    private var setCount = 0

    /// Stands for a value not read yet; removed before a record is handed out.
    private static let placeholder = PropertyEntry(nil, datestamp: .distantPast)

    init(_ keys: WantedKeys) {
        self.keys = keys
        var template = [String: PropertyEntry](minimumCapacity: keys.count)
        for key in keys.keys { template[key] = Self.placeholder }
        positions = keys.keys.map { template.index(forKey: $0)! }
        self.template = template
    }

    /// Starts the properties of the next record.
    mutating func begin() {
        current = template
        setCount = 0
    }

    /// Sets the value of key number `key`: a value, not a removal (each key at most once per
    /// record, as `WantedKeys.visit` shows each key once).
    mutating func set(_ entry: consuming PropertyEntry, forKey key: Int) {
        assert(entry.value != nil, "ResultProperties holds values, not removals")
        // Moved in, not copied (a copy and a destroy of the entry per value).
        current.values[positions[key]] = consume entry
        setCount += 1
    }

    /// The current record's properties: the keys set since `begin`.
    mutating func finish() -> [String: PropertyEntry] {
        if setCount == 0 { return [:] }
        if setCount < keys.count {
            // The keys first, then the removals: a removal may move other entries, so a
            // position is read only while the dictionary is as the template laid it out.
            let unset = keys.keys.indices.filter { current.values[positions[$0]].value == nil }
            for index in unset { current.removeValue(forKey: keys.keys[index]) }
        }
        return current
    }
}
