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
        guard let primary = try context.tree(layout.primary), let envelope = try transaction.get(idBytes, in: primary) else { return nil }
        return try decode(envelope, id: idBytes)
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
        try loadAll(value, from: index, limit: 1).first
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

    /// Two passes: the index entries in range are collected first (views into the snapshot, no
    /// decoding), then the instances are looked up together (`Transaction.get(_:in:)` for many
    /// keys overlaps their cache misses) and decoded straight into the result's storage.
    func loadIndexed<Value: OrderedKey>(_ info: IndexInfo<F.Instance>, _ range: KeyRange, valueType: Value.Type, order: RangeOrder,
                                        limit: Int?) throws -> [F.Instance] {
        var views: [ByteView] = []
        /// Direct indexes only: the entry keys, to name an instance that fails to decode.
        var directKeys: [ByteView] = []
        try scan(info.tree, range, order: order, limit: limit) { key, value in
            if info.isDirect {
                views.append(value)
                directKeys.append(key)
            } else {
                views.append(key.subview(from: try key.withUnsafeBytes {
                    try Self.identifierOffset(inIndexKey: $0, valueType: valueType, index: info.name)
                }))
            }
        }
        let envelopes: [ByteView?]
        if info.isDirect || views.isEmpty {
            envelopes = views
        } else if let primary = try context.tree(layout.primary) {
            envelopes = try transaction.get(views, in: primary)
        } else {
            envelopes = []
        }
        return try Array(unsafeUninitializedCapacity: views.count) { storage, initialized in
            for index in views.indices {
                guard index < envelopes.count, let envelope = envelopes[index] else {
                    throw DatastoreError.corruptIndexEntry(datastore: F.name, index: info.name, reason: "it names a missing instance")
                }
                let instance = try decode(envelope, id: info.isDirect
                    ? try directKeys[index].withUnsafeBytes { Array(try Self.identifierBytes(inIndexKey: $0, valueType: valueType, index: info.name)) }
                    : views[index].bytes)
                (storage.baseAddress! + initialized).initialize(to: instance)
                initialized += 1
            }
        }
    }

    /// Decodes each instance an index range reaches, in index order, until `body` returns false.
    func forEachIndexed<Value: OrderedKey>(_ info: IndexInfo<F.Instance>, _ range: KeyRange, valueType: Value.Type, order: RangeOrder,
                                           limit: Int?, _ body: (F.Instance) throws -> Bool) throws {
        let primary = info.isDirect ? nil : try context.tree(layout.primary)
        var stopped = false
        try scan(info.tree, range, order: order, limit: limit) { key, value in
            guard !stopped else { return }
            let envelope = try envelope(ofIndexEntry: key, value: value, info, primary: primary, valueType: valueType)
            stopped = try !body(try decode(envelope, id: try key.withUnsafeBytes {
                Array(try Self.identifierBytes(inIndexKey: $0, valueType: valueType, index: info.name))
            }))
        }
    }

    /// The stored instance an index entry stands for: its value (direct index) or the primary
    /// entry of the identifier that ends its key (reference index).
    func envelope<Value: OrderedKey>(ofIndexEntry key: ByteView, value: ByteView, _ info: IndexInfo<F.Instance>, primary: Tree?,
                                             valueType: Value.Type) throws -> ByteView {
        if info.isDirect { return value }
        let envelope = try key.withUnsafeBytes { key in
            try primary.flatMap { try transaction.get(try Self.identifierBytes(inIndexKey: key, valueType: valueType, index: info.name), in: $0) }
        }
        guard let envelope else {
            throw DatastoreError.corruptIndexEntry(datastore: F.name, index: info.name, reason: "it names a missing instance")
        }
        return envelope
    }

    /// The identifier part of an index key (a view into it): what follows the self-delimiting value.
    static func identifierBytes<Value: OrderedKey>(inIndexKey key: UnsafeRawBufferPointer, valueType: Value.Type,
                                                   index: String) throws -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: key[try identifierOffset(inIndexKey: key, valueType: valueType, index: index)...])
    }

    /// Where the identifier starts in an index key; a key whose value does not parse is
    /// `DatastoreError.corruptIndexEntry`.
    static func identifierOffset<Value: OrderedKey>(inIndexKey key: UnsafeRawBufferPointer, valueType: Value.Type, index: String) throws -> Int {
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
        guard !range.isEmpty, limit != 0, let tree = try context.tree(treeName) else { return }
        var remaining = limit ?? Int.max
        try transaction.scan(tree, from: range.lower, to: range.upper, reverse: order == .descending) { key, value in
            try body(key, value)
            remaining -= 1
            return remaining > 0
        }
    }
}
