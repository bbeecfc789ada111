/// The four shapes an index can take.
public enum IndexKind: String, Codable, Sendable {
    /// One value per instance, at most one instance per value.
    case oneToOne
    /// One value per instance, any number of instances per value.
    case oneToMany
    /// Many values per instance (a sequence property), at most one instance per value.
    case manyToOne
    /// Many values per instance, any number of instances per value.
    case manyToMany

    public var isUnique: Bool { self == .oneToOne || self == .manyToOne }
}

/// What the storage side needs to know about an index, with its value type erased: how to turn an
/// instance into the encoded values it is indexed under.
///
/// Index entries are tree keys `encoded value ++ encoded identifier`; both encodings are
/// order-preserving and self-delimiting, so entries sort by value, then by identifier, and the
/// entries of one value are exactly the keys with that value's bytes as prefix.
public final class IndexDefinition<Instance>: @unchecked Sendable {
    // Immutable after init; the closure only reads through key paths.
    let kind: IndexKind
    /// The key paths it reads, without their root type (`.title`), for descriptors and messages.
    let path: String
    let valueType: String
    private let extract: (Instance) -> [[UInt8]]
    /// Set for an index with exactly one value per instance: that value, without the array
    /// around it (the write path's common case, one allocation less per index and instance).
    let singleValue: ((Instance) -> [UInt8])?
    /// Set for single-value indexes of the library's own key types (`OrderedKeyExactEquality`):
    /// whether two instances hold values with identical encodings, told without encoding them
    /// where `==` decides it. An update tells an unchanged value this way.
    let sameSingleValue: ((Instance, Instance) -> Bool)?
    /// `singleValue` written at the end of a writer's bytes instead of into an array of its own
    /// (the insert path appends it to its reused key buffer: no allocation per index). Same bytes.
    let appendSingleValue: ((Instance, inout OrderedKeyWriter) -> Void)?
    private let describeValue: ([UInt8]) -> String?

    /// `valueTypeName` is how descriptors name the value type (default: the type's name).
    @usableFromInline
    init<Value: OrderedKey>(kind: IndexKind, path: String, valueType: Value.Type, valueTypeName: String? = nil,
                            extract: @escaping (Instance) -> [[UInt8]]) {
        self.kind = kind
        self.path = path
        self.valueType = valueTypeName ?? "\(Value.self)"
        self.extract = extract
        singleValue = nil
        sameSingleValue = nil
        appendSingleValue = nil
        describeValue = { bytes in (try? Value(orderedKeyBytes: bytes)).map { String(reflecting: $0) } }
    }

    /// An index with exactly one value per instance, which `single` reads (and `same`, if given,
    /// compares between two instances without encoding them).
    @usableFromInline
    init<Value: OrderedKey>(kind: IndexKind, path: String, valueType: Value.Type, valueTypeName: String? = nil,
                            single: @escaping (Instance) -> [UInt8], same: ((Instance, Instance) -> Bool)? = nil,
                            appendSingle: ((Instance, inout OrderedKeyWriter) -> Void)? = nil) {
        self.kind = kind
        self.path = path
        self.valueType = valueTypeName ?? "\(Value.self)"
        extract = { [single($0)] }
        singleValue = single
        sameSingleValue = same
        appendSingleValue = appendSingle
        describeValue = { bytes in (try? Value(orderedKeyBytes: bytes)).map { String(reflecting: $0) } }
    }

    /// An encoded value as the user wrote it (`"isbn-1"`, `CompositeKey(...)`), for messages.
    func describe(_ encoded: [UInt8]) -> String { describeValue(encoded) ?? hexBytes(encoded) }

    /// The encoded values of `instance`, sorted and without duplicates.
    func encodedValues(of instance: Instance) -> [[UInt8]] {
        let values = extract(instance)
        if values.count <= 1 { return values }
        var unique = Array(Set(values))
        unique.sort { $0.lexicographicallyPrecedes($1) }
        return unique
    }

    /// What identifies the declaration: a change means the index must be rebuilt. Its kind, value
    /// type and the properties it reads (`.title`), never the instance type's name.
    var signature: String { "\(kind.rawValue)(\(valueType)) \(path)" }
}

/// An index declared by a format. `Value` is what queries take.
public protocol IndexRepresentation<Instance>: Sendable {
    associatedtype Instance
    associatedtype Value: OrderedKey
    var definition: IndexDefinition<Instance> { get }
}

/// An index with at most one instance per value: single-result loads are allowed.
public protocol UniqueIndexRepresentation<Instance>: IndexRepresentation {}

/// A key path's text without its root type: `\Book.title` -> `.title`. Index declarations are
/// recorded with it, so renaming the instance type (keeping the old shape as `BookV1`, say) does
/// not make its indexes stale: an index is what it reads, of which kind and value type.
@usableFromInline
func describe<Root, Value>(_ keyPath: KeyPath<Root, Value>) -> String {
    let text = "\(keyPath)"
    let root = "\\" + String(describing: Root.self)
    return text.hasPrefix(root) ? String(text.dropFirst(root.count)) : text
}
