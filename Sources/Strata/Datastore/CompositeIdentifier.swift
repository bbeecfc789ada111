import StrataCore

/// The leading parts of a composite key (`CompositeKey`), for loading everything that starts with
/// them: a composite identifier (Empire's `(shelf, title)` primary keys) or a composite index.
///
/// ```swift
/// // Identifier = CompositeKey<Int, String>: (shelf, title)
/// try books.load(KeyPrefix(3))                                  // all of shelf 3, by title
/// try books.load(KeyPrefix(3), then: "A"..<"B", order: .descending, limit: 10)
/// try books.load(KeyPrefix("Herbert"), from: \.authorTitle)     // composite index: equality on the author
/// ```
///
/// Parts are checked against the key's component types when used: a part of the wrong type (in
/// the wrong position) or more parts than the key has is a `KeyPrefixError`, never a silently
/// empty result. Integer literals are `Int`: write `Int32(3)` for an `Int32` component.
public struct KeyPrefix: Sendable, CustomStringConvertible {
    /// The leading parts, first to last (empty: every key, for use with a `then:` range).
    public let parts: [any OrderedKey]

    /// The leading parts of a key, in the key's order: `KeyPrefix(3)`, `KeyPrefix(3, "Dune")`.
    public init(_ parts: any OrderedKey...) {
        self.parts = parts
    }

    public var description: String { "(" + parts.map { "\($0)" }.joined(separator: ", ") + ")" }

    /// The encoded leading parts, after checking them against `Key`'s components; `nextPart` is
    /// the type of a range on the part after them, if one is given.
    func encoded<Key: OrderedKey>(for key: Key.Type, nextPart: (any OrderedKey.Type)? = nil) throws -> [UInt8] {
        let components = Key.keyParts
        let given = parts.count + (nextPart == nil ? 0 : 1)
        guard given <= components.count else {
            throw KeyPrefixError.tooManyParts(key: Key.keyTypeName, given: given, components: components.count)
        }
        var writer = OrderedKeyWriter()
        for (position, part) in parts.enumerated() {
            guard type(of: part) == components[position] else {
                throw KeyPrefixError.partTypeMismatch(key: Key.keyTypeName, position: position, expected: "\(components[position])",
                                                      found: "\(type(of: part))")
            }
            part.encodeOrderedKey(into: &writer)
        }
        if let nextPart, nextPart != components[parts.count] {
            throw KeyPrefixError.partTypeMismatch(key: Key.keyTypeName, position: parts.count, expected: "\(components[parts.count])",
                                                  found: "\(nextPart)")
        }
        return writer.bytes
    }

    /// Every key starting with these parts.
    func keyRange<Key: OrderedKey>(for key: Key.Type) throws -> KeyRange {
        KeyRange.prefixed(try encoded(for: key))
    }

    /// Every key starting with these parts whose next part lies in `range`.
    func keyRange<Key: OrderedKey, R: IndexRangeExpression>(for key: Key.Type, then range: R) throws -> KeyRange {
        KeyRange(range, after: try encoded(for: key, nextPart: R.Bound.self))
    }
}

/// A `KeyPrefix` that does not fit the key it is used with.
public enum KeyPrefixError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The part at `position` (0-based; a `then:` range counts as the part after the prefix) is
    /// of another type than the key's component there: a part out of order, or the wrong type.
    case partTypeMismatch(key: String, position: Int, expected: String, found: String)
    /// More parts (a `then:` range included) than the key has components (a key that is not
    /// composite has one).
    case tooManyParts(key: String, given: Int, components: Int)

    public var description: String {
        switch self {
        case let .partTypeMismatch(key, position, expected, found):
            return "key prefix for \(key): part \(position) is \(found), but the key's component there is \(expected) (parts go in the key's order)"
        case let .tooManyParts(key, given, components):
            return "key prefix for \(key): \(given) part(s) given, the key has \(components) component(s)"
        }
    }
}

extension DatastoreReader {
    /// The instances whose (composite) identifier starts with `prefix`, in identifier order.
    /// Throws `KeyPrefixError` if the prefix does not fit `F.Identifier`.
    public func load(_ prefix: KeyPrefix, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance] {
        try loadIdentifierRange(try prefix.keyRange(for: F.Identifier.self), order: order, limit: limit)
    }

    /// The instances whose identifier starts with `prefix` and whose next part lies in `range`.
    public func load<R: IndexRangeExpression>(_ prefix: KeyPrefix, then range: R, order: RangeOrder = .ascending,
                                              limit: Int? = nil) throws -> [F.Instance] {
        try loadIdentifierRange(try prefix.keyRange(for: F.Identifier.self, then: range), order: order, limit: limit)
    }

    /// The identifiers that start with `prefix` (and whose next part lies in `range`, if given),
    /// without decoding any instance.
    public func identifiers(_ prefix: KeyPrefix, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Identifier] {
        try identifiers(in: try prefix.keyRange(for: F.Identifier.self), order: order, limit: limit)
    }

    /// The instances whose composite index value starts with `prefix`: equality on the leading
    /// parts, in index order (then by identifier).
    public func load<I: IndexRepresentation>(_ prefix: KeyPrefix, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                             limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try loadIndexed(try schema.index(index), try prefix.keyRange(for: I.Value.self), valueType: I.Value.self, order: order, limit: limit)
    }

    /// The instances whose composite index value starts with `prefix` and whose next part lies
    /// in `range` (`shelf 3, title in "A"..<"B"`).
    public func load<I: IndexRepresentation, R: IndexRangeExpression>(_ prefix: KeyPrefix, then range: R, from index: KeyPath<F, I>,
                                                                      order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance]
    where I.Instance == F.Instance {
        try loadIndexed(try schema.index(index), try prefix.keyRange(for: I.Value.self, then: range), valueType: I.Value.self, order: order,
                        limit: limit)
    }
}

extension Datastore {
    /// The instances whose (composite) identifier starts with `prefix` (see `KeyPrefix`).
    public func load(_ prefix: KeyPrefix, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance] {
        try store.read { try $0[self].load(prefix, order: order, limit: limit) }
    }

    /// The instances whose identifier starts with `prefix` and whose next part lies in `range`.
    public func load<R: IndexRangeExpression>(_ prefix: KeyPrefix, then range: R, order: RangeOrder = .ascending,
                                              limit: Int? = nil) throws -> [F.Instance] {
        try store.read { try $0[self].load(prefix, then: range, order: order, limit: limit) }
    }

    /// The identifiers that start with `prefix`, without decoding any instance.
    public func identifiers(_ prefix: KeyPrefix, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Identifier] {
        try store.read { try $0[self].identifiers(prefix, order: order, limit: limit) }
    }

    /// The instances whose composite index value starts with `prefix` (equality on leading parts).
    public func load<I: IndexRepresentation>(_ prefix: KeyPrefix, from index: KeyPath<F, I>, order: RangeOrder = .ascending,
                                             limit: Int? = nil) throws -> [F.Instance] where I.Instance == F.Instance {
        try store.read { try $0[self].load(prefix, from: index, order: order, limit: limit) }
    }

    /// The instances whose composite index value starts with `prefix` and whose next part lies in `range`.
    public func load<I: IndexRepresentation, R: IndexRangeExpression>(_ prefix: KeyPrefix, then range: R, from index: KeyPath<F, I>,
                                                                      order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Instance]
    where I.Instance == F.Instance {
        try store.read { try $0[self].load(prefix, then: range, from: index, order: order, limit: limit) }
    }

    /// The instances whose identifier starts with `prefix` (and whose next part lies in `range`,
    /// if given), as a pull-based `DatastoreStream`. A prefix that does not fit throws
    /// `KeyPrefixError` from the first `next()`.
    public func stream(_ prefix: KeyPrefix, order: RangeOrder = .ascending, limit: Int? = nil,
                       batchSize: Int = DatastoreStreamDefaults.batchSize, consistency: StreamConsistency = .perBatch) -> DatastoreStream<F> {
        Result { try prefix.keyRange(for: F.Identifier.self) }
            .configured(order: order, limit: limit, batchSize: batchSize, consistency: consistency, in: self)
    }

    /// The instances whose identifier starts with `prefix` and whose next part lies in `range`, as a stream.
    public func stream<R: IndexRangeExpression>(_ prefix: KeyPrefix, then range: R, order: RangeOrder = .ascending, limit: Int? = nil,
                                                batchSize: Int = DatastoreStreamDefaults.batchSize,
                                                consistency: StreamConsistency = .perBatch) -> DatastoreStream<F> {
        Result { try prefix.keyRange(for: F.Identifier.self, then: range) }
            .configured(order: order, limit: limit, batchSize: batchSize, consistency: consistency, in: self)
    }
}

extension Result where Success == KeyRange, Failure == any Error {
    /// A primary stream over this range, or one that throws this error from its first `next()`.
    fileprivate func configured<F: DatastoreFormat>(order: RangeOrder, limit: Int?, batchSize: Int, consistency: StreamConsistency,
                                                    in datastore: Datastore<F, some StoreAccess>) -> DatastoreStream<F> {
        switch self {
        case .success(let range):
            return .primary(datastore, range, order: order, limit: limit, batchSize: batchSize, consistency: consistency)
        case .failure(let error):
            var stream = DatastoreStream<F>.primary(datastore, .everything, order: order, limit: 0, batchSize: batchSize, consistency: consistency)
            stream.failure = error
            return stream
        }
    }
}
