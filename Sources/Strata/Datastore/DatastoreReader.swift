import StrataCore

/// Reads of one datastore inside one transaction (`tx[datastore]`). Every load sees the same
/// snapshot. Only the instances returned are decoded; counts decode nothing.
public class DatastoreReader<F: DatastoreFormat> {
    let context: StoreReadContext
    let schema: DatastoreSchema<F>

    init(context: StoreReadContext, schema: DatastoreSchema<F>) {
        self.context = context
        self.schema = schema
    }

    var transaction: Transaction { context.transaction }
    var layout: DatastoreLayout { schema.layout }

    func decode(_ envelope: ByteView, id idBytes: @autoclosure () throws -> [UInt8]) throws -> F.Instance {
        try schema.decode(envelope, id: try idBytes())
    }

    /// Number of instances (no decoding).
    public var count: Int {
        get throws { try context.tree(layout.primary).map { try transaction.count($0) } ?? 0 }
    }

    /// The instance with identifier `id`, or nil.
    public func load(_ id: F.Identifier) throws -> F.Instance? {
        try load(idBytes: id.orderedKeyBytes)
    }

    func load(idBytes: [UInt8]) throws -> F.Instance? {
        var instance: F.Instance?
        try idBytes.withUnsafeBytes { try DatastoreLookup.load(idBytes: $0, schema: schema, in: context) { instance = $0 } }
        return instance
    }

    /// Every instance, in identifier order.
    public func loadAll(order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance] {
        try loadIdentifierRange(.everything, order: order, limit: limit)
    }

    /// Instances whose identifier lies in `range`.
    public func load<R: IndexRangeExpression>(_ range: R, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance]
    where R.Bound == F.Identifier {
        try loadIdentifierRange(KeyRange(range), order: order, limit: limit)
    }

    func loadIdentifierRange(_ range: KeyRange, order: RangeOrder, limit: Int?) throws -> [F.Instance] {
        var results: [F.Instance] = []
        try scan(layout.primary, range, order: order, limit: limit) { key, envelope in results.append(try decode(envelope, id: key.bytes)) }
        return results
    }

    /// The instance a unique index maps `value` to, or nil.
    public func load<I: UniqueIndexRepresentation>(_ value: I.Value, from index: KeyPath<F, I>) throws -> F.Instance?
    where I.Instance == F.Instance {
        var instance: F.Instance?
        let info = try schema.readTarget(index)
        try value.withOrderedKeyBytes { valueBytes in
            try DatastoreLookup.load(uniqueValueBytes: valueBytes, index: info, schema: schema, in: context) { instance = $0 }
        }
        return instance
    }

    /// Every instance indexed under `value`, ordered by identifier.
    public func loadAll<I: IndexRepresentation>(_ value: I.Value, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try loadIndexed(try schema.index(index), KeyRange.prefixed(value.orderedKeyBytes), valueType: I.Value.self, order: order, limit: limit)
    }

    /// Instances whose index value lies in `range` (`a..<b`, `a...b`, `a...`, `..<b`, `...b`, `IndexRange`),
    /// by value then identifier. A many-valued index yields an instance once per matching value.
    public func load<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                                                      limit: Int? = nil) throws -> [F.Instance]
    where I.Instance == F.Instance, R.Bound == I.Value {
        try loadIndexed(try schema.index(index), KeyRange(range), valueType: I.Value.self, order: order, limit: limit)
    }

    /// Every instance, in the index's order.
    public func load<I: IndexRepresentation>(_ range: UnboundedRange, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                             limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try loadIndexed(try schema.index(index), .everything, valueType: I.Value.self, order: order, limit: limit)
    }

    /// How many index entries lie in `range` (no decoding).
    public func count<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>) throws -> Int
    where I.Instance == F.Instance, R.Bound == I.Value {
        var total = 0
        try scan(try schema.index(index).tree, KeyRange(range), order: .ascending, limit: nil) { _, _ in total += 1 }
        return total
    }

    /// Two passes, the entries in range collected first (no decoding), then decoded straight into
    /// the result's storage. A reference index's entries are collected as the identifiers they
    /// name, in place (`Transaction.referencedKeys`); the instances are then looked up together
    /// (`Transaction.forEachValue(of:in:_:)` overlaps their cache misses) and each is decoded from
    /// its bytes in place: no view (and no atomic retain and release of its owner) per entry. A
    /// direct index holds the instances in its entries' values: the scan collects a view of each
    /// value and of each key (which names the instance if it fails to decode), and no lookup follows.
    func loadIndexed<Value: OrderedKey>(_ info: IndexInfo<F.Instance>, _ range: KeyRange, valueType: Value.Type, order: RangeOrder,
                                        limit: Int?) throws -> [F.Instance] {
        if !info.isDirect {
            guard !range.isEmpty, limit != 0, let index = try context.tree(info.tree) else { return [] }
            // A negative limit reads one entry, as `scan` (and so a direct index) does.
            let references = try transaction.referencedKeys(in: index, from: range.lower, to: range.upper, reverse: order == .descending,
                                                            limit: limit.map { max($0, 1) } ?? Int.max) { key in
                try Self.identifierOffset(inIndexKey: key, valueType: valueType, index: info.name)
            }
            guard references.count > 0 else { return [] }
            guard let primary = try context.tree(layout.primary) else {
                throw DatastoreError.corruptIndexEntry(datastore: F.name, index: info.name, reason: "it names a missing instance")
            }
            return try Array(unsafeUninitializedCapacity: references.count) { storage, initialized in
                try transaction.forEachValue(of: references, in: primary) { _, id, envelope in
                    guard let envelope else {
                        throw DatastoreError.corruptIndexEntry(datastore: F.name, index: info.name, reason: "it names a missing instance")
                    }
                    // Decoded straight into the slot: a local first would cost a copy and a destroy
                    // of the instance (value witnesses, as this code is unspecialized).
                    // `forEachValue` goes through the keys in order, so its position is `initialized`.
                    (storage.baseAddress! + initialized).initialize(to: try schema.decode(bytes: envelope, id: Array(id)))
                    initialized += 1
                }
            }
        }
        var views: [ByteView] = []
        // Room for a typical page of results up front, instead of growing through several copies.
        views.reserveCapacity(min(limit ?? 64, 64))
        /// The entry keys, to name an instance that fails to decode.
        var directKeys: [ByteView] = []
        try scan(info.tree, range, order: order, limit: limit) { key, value in
            views.append(value)
            directKeys.append(key)
        }
        return try Array(unsafeUninitializedCapacity: views.count) { storage, initialized in
            for index in views.indices {
                (storage.baseAddress! + initialized).initialize(to: try decode(views[index], id: try directKeys[index].withUnsafeBytes {
                    Array(try Self.identifierBytes(inIndexKey: $0, valueType: valueType, index: info.name))
                }))
                initialized += 1
            }
        }
    }

    /// Decodes each instance an index range reaches, at most `limit`, in index order, and passes
    /// it to `body` with its index entry's key. A reference entry whose instance is missing is
    /// `DatastoreError.corruptIndexEntry`.
    static func forEachIndexed<Value: OrderedKey>(_ info: IndexInfo<F.Instance>, _ range: KeyRange, valueType: Value.Type,
                                                  order: RangeOrder, limit: Int?, schema: DatastoreSchema<F>,
                                                  in reads: some DatastoreTreeReads, _ body: (F.Instance, ByteView) throws -> Void) throws {
        try reads.scan(info.tree, range, order: order, limit: limit) { key, value in
            let idBytes = try key.withUnsafeBytes { Array(try identifierBytes(inIndexKey: $0, valueType: valueType, index: info.name)) }
            guard let envelope = info.isDirect ? value : try reads.get(idBytes, inTree: schema.layout.primary) else {
                throw DatastoreError.corruptIndexEntry(datastore: F.name, index: info.name, reason: "it names a missing instance")
            }
            try body(try schema.decode(envelope, id: idBytes), key)
        }
    }

    /// The identifier part of an index key (a view into it): what follows the self-delimiting value.
    static func identifierBytes<Value: OrderedKey>(inIndexKey key: UnsafeRawBufferPointer, valueType: Value.Type,
                                                   index: String) throws -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: key[try identifierOffset(inIndexKey: key, valueType: valueType, index: index)...])
    }

    /// Where the identifier starts in an index key; a key whose value does not parse is
    /// `DatastoreError.corruptIndexEntry`.
    static func identifierOffset<Value: OrderedKey>(inIndexKey key: UnsafeRawBufferPointer, valueType: Value.Type, index: String) throws -> Int {
        // A string value (the usual index) is found by its terminator without a witness call.
        if Value.self == String.self, let end = OrderedKeyReader.escapedEnd(in: key, from: 0) { return end }
        var reader = OrderedKeyReader(key)
        do {
            try Value.skipOrderedKey(in: &reader)
        } catch {
            throw DatastoreError.corruptIndexEntry(datastore: F.name, index: index, reason: "key \(hexBytes(Array(key))): \(error)")
        }
        return reader.offset
    }

    /// Visits keys of `tree` in `range`; a missing tree is empty.
    func scan(_ treeName: String, _ range: KeyRange, order: RangeOrder, limit: Int?,
              _ body: (ByteView, ByteView) throws -> Void) throws {
        try context.scan(treeName, range, order: order, limit: limit, body)
    }
}
