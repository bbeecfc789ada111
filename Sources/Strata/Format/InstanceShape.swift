import Foundation
import StrataCore

/// A description of how a format's instances are laid out, kept in the store (`<name>#info`) so
/// tools can show binary-coded instances as JSON without the Swift type (`strata dump --decode`).
///
/// Recorded from the first instances each process writes (`InstanceShapeRecorder`); fields seen
/// in any of them are merged in. A field never present in those (an optional left nil) has no
/// description: it is shown as `{"$base64": …}`.
indirect enum InstanceShape: Codable, Equatable, Sendable {
    case bool, string, signed, unsigned, double, float, date, uuid, data
    /// A keyed container: field name -> shape.
    case object([String: InstanceShape])
    /// An unkeyed container; its elements' shape (nil while every array seen was empty).
    case array(InstanceShape?)

    /// This shape with what `other` knows added (fields and element shapes; for a field whose
    /// kinds disagree the first one seen stays).
    func merged(with other: InstanceShape) -> InstanceShape {
        switch (self, other) {
        case (.object(let mine), .object(let theirs)):
            return .object(mine.merging(theirs) { $0.merged(with: $1) })
        case (.array(let mine), .array(let theirs)):
            guard let mine else { return .array(theirs) }
            return .array(theirs.map { mine.merged(with: $0) } ?? mine)
        default:
            return self
        }
    }
}

/// What `<name>#info` keeps under `StoredInstanceShape.key`: the shape of instances whose envelope starts with
/// `prefix` (the coding tag and version that wrote them).
struct StoredInstanceShape: Codable, Equatable {
    /// The shape recorded in a datastore's info tree `info`, or nil (none recorded, or a record
    /// this version cannot read: readable dumps then fall back to base64, never a guess).
    static func stored(in info: Tree, of transaction: Transaction) throws -> StoredInstanceShape? {
        try transaction.get(key, in: info).flatMap { try? JSONDecoder().decode(StoredInstanceShape.self, from: Data($0.bytes)) }
    }

    static let key = "shape"
    var prefix: [UInt8]
    var shape: InstanceShape
}

/// Records the shape of an instance by encoding it with an `Encoder` that keeps only the kind of
/// each value (see `InstanceShape`).
enum InstanceShapeRecorder {
    static func shape<T: Encodable>(of value: T) -> InstanceShape? {
        let node = ShapeNode()
        node.record(value)
        return node.shape
    }
}

/// One value being recorded: a leaf, or a container whose children are nodes.
private final class ShapeNode {
    var leaf: InstanceShape?
    var fields: [String: ShapeNode]?
    var elements: ShapeNode??

    var shape: InstanceShape? {
        if let fields { return .object(fields.compactMapValues(\.shape)) }
        if let elements { return .array(elements?.shape) }
        return leaf
    }

    func record<T: Encodable>(_ value: T) {
        if T.self == Date.self { leaf = .date; return }
        if T.self == UUID.self { leaf = .uuid; return }
        if T.self == Data.self { leaf = .data; return }
        try? value.encode(to: ShapeEncoder(node: self))
    }

    func field(_ key: String) -> ShapeNode {
        if fields == nil { fields = [:] }
        if let node = fields?[key] { return node }
        let node = ShapeNode()
        fields?[key] = node
        return node
    }

    /// Every element is recorded into one node, so their shapes merge.
    func element() -> ShapeNode {
        if let existing = elements, let node = existing { return node }
        let node = ShapeNode()
        elements = .some(node)
        return node
    }

    func primitive(_ value: Any) {
        switch value {
        case is Bool: leaf = .bool
        case is String: leaf = .string
        case is Double: leaf = .double
        case is Float: leaf = .float
        case is Int, is Int8, is Int16, is Int32, is Int64, is Int128: leaf = .signed
        default: leaf = .unsigned
        }
    }
}

private struct ShapeEncoder: Encoder {
    let node: ShapeNode
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if node.fields == nil { node.fields = [:] }
        return KeyedEncodingContainer(KeyedShapeContainer<Key>(node: node))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if node.elements == nil { node.elements = .some(nil) }
        return UnkeyedShapeContainer(node: node)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleShapeContainer(node: node) }
}

private struct KeyedShapeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: ShapeNode
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode(_ value: Bool, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: String, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { node.field(key.stringValue).primitive(value) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { node.field(key.stringValue).record(value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
    -> KeyedEncodingContainer<NestedKey> {
        ShapeEncoder(node: node.field(key.stringValue)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ShapeEncoder(node: node.field(key.stringValue)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ShapeEncoder(node: node.field("super")) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ShapeEncoder(node: node.field(key.stringValue)) }
}

private struct UnkeyedShapeContainer: UnkeyedEncodingContainer {
    let node: ShapeNode
    var codingPath: [any CodingKey] { [] }
    var count = 0

    mutating func encodeNil() throws { count += 1 }
    mutating func encode(_ value: Bool) throws { add(value) }
    mutating func encode(_ value: String) throws { add(value) }
    mutating func encode(_ value: Double) throws { add(value) }
    mutating func encode(_ value: Float) throws { add(value) }
    mutating func encode(_ value: Int) throws { add(value) }
    mutating func encode(_ value: Int8) throws { add(value) }
    mutating func encode(_ value: Int16) throws { add(value) }
    mutating func encode(_ value: Int32) throws { add(value) }
    mutating func encode(_ value: Int64) throws { add(value) }
    mutating func encode(_ value: UInt) throws { add(value) }
    mutating func encode(_ value: UInt8) throws { add(value) }
    mutating func encode(_ value: UInt16) throws { add(value) }
    mutating func encode(_ value: UInt32) throws { add(value) }
    mutating func encode(_ value: UInt64) throws { add(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        count += 1
        node.element().record(value)
    }

    private mutating func add(_ value: Any) {
        count += 1
        node.element().primitive(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        count += 1
        return ShapeEncoder(node: node.element()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        count += 1
        return ShapeEncoder(node: node.element()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { ShapeEncoder(node: node.element()) }
}

private struct SingleShapeContainer: SingleValueEncodingContainer {
    let node: ShapeNode
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil() throws {}
    mutating func encode(_ value: Bool) throws { node.primitive(value) }
    mutating func encode(_ value: String) throws { node.primitive(value) }
    mutating func encode(_ value: Double) throws { node.primitive(value) }
    mutating func encode(_ value: Float) throws { node.primitive(value) }
    mutating func encode(_ value: Int) throws { node.primitive(value) }
    mutating func encode(_ value: Int8) throws { node.primitive(value) }
    mutating func encode(_ value: Int16) throws { node.primitive(value) }
    mutating func encode(_ value: Int32) throws { node.primitive(value) }
    mutating func encode(_ value: Int64) throws { node.primitive(value) }
    mutating func encode(_ value: UInt) throws { node.primitive(value) }
    mutating func encode(_ value: UInt8) throws { node.primitive(value) }
    mutating func encode(_ value: UInt16) throws { node.primitive(value) }
    mutating func encode(_ value: UInt32) throws { node.primitive(value) }
    mutating func encode(_ value: UInt64) throws { node.primitive(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { node.record(value) }
}
