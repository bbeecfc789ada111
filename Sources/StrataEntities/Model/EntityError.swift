import Foundation
import Strata
import StrataCore

/// Every failure of the entity store that is not the engine's own (`StrataError`). Each case
/// names what a person needs to fix it, and `description` says it in one sentence.
public enum EntityError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A typed read asked for a property the entity does not have.
    case unknownKey(entity: EntityID, key: String)
    /// A typed read found a value of another kind.
    case wrongValueType(entity: EntityID, key: String, expected: String, found: String)
    /// A property key is longer than the store's key size allows (checked before anything is written).
    case keyTooLong(key: String, bytes: Int, maximum: Int)
    /// An entity type label is longer than the store's key size allows (checked before anything is written).
    case typeLabelTooLong(label: String, bytes: Int, maximum: Int)
    /// A value nests arrays `depth` levels deep, more than `maximum`
    /// (`EntityValueCoding.maximumDepth`), the depth every reader decodes and an export can
    /// write (checked before the value is stored; like every failed operation, it fails the
    /// write, which commits nothing). Flatten the value, or store the deep structure as `data`
    /// (e.g. JSON).
    case valueTooDeep(key: String, depth: Int, maximum: Int)
    /// A datestamp is NaN (`what` says whose), which cannot be ordered against the others: the
    /// newest entry could not be told. Pass a real date (infinite ones are ordered and allowed).
    case invalidDatestamp(what: String)
    /// A property key or type label is empty.
    case emptyName(what: String)
    /// A reference that must denote one entity matches several.
    case ambiguousReference(reference: String, matches: Int)
    /// A reference matched nothing and carries no type to create the entity with.
    case unresolvedReference(reference: String)
    /// An entity is not of the type a custom kind expects.
    case wrongEntityType(entity: EntityID, expected: String, found: String)
    /// A write operation was given a database handle opened read-only.
    case readOnly(path: String)
    /// Bytes in the entity trees are not what this build writes (a foreign or damaged store).
    case corrupt(reason: String)
    /// An interchange document cannot be imported; the reason says where and why.
    case invalidInterchange(reason: String)
    /// An earlier operation of this write threw (`reason`), possibly after writing part of its
    /// change, so the write cannot commit; nothing of it is written. Let the error leave the
    /// write body (or do the operations that can fail in a write of their own).
    case failedOperation(reason: String)
    /// The store's entities were written in another layout of the entity trees than this build
    /// reads (1 is an earlier development build's); export them with that build and import them.
    case unsupportedLayout(found: UInt64, supported: UInt64)

    public var description: String {
        switch self {
        case let .unknownKey(entity, key):
            return "entity \(entity) has no property '\(key)'"
        case let .wrongValueType(entity, key, expected, found):
            return "property '\(key)' of entity \(entity) holds a \(found), not a \(expected)"
        case let .keyTooLong(key, bytes, maximum):
            return "property key '\(key.prefix(40))…' has \(bytes) encoded bytes; this store allows at most \(maximum) (nothing was written)"
        case let .typeLabelTooLong(label, bytes, maximum):
            return "type label '\(label.prefix(40))…' has \(bytes) encoded bytes; this store allows at most \(maximum) (nothing was written)"
        case let .valueTooDeep(key, depth, maximum):
            return "the value of '\(key.prefix(40))' nests arrays \(depth) levels deep; at most \(maximum) are allowed (the write commits nothing)"
        case let .invalidDatestamp(what):
            return "\(what) is NaN, which cannot be ordered against other datestamps; pass a real date (the operation read and wrote nothing)"
        case let .emptyName(what):
            return "an empty \(what) is not allowed"
        case let .ambiguousReference(reference, matches):
            return "\(reference) matches \(matches) entities where exactly one is required; add a type or match a unique property"
        case let .unresolvedReference(reference):
            return "\(reference) matches no entity; give it a type (createIfMissing) to create one"
        case let .wrongEntityType(entity, expected, found):
            return "entity \(entity) is a '\(found)', not a '\(expected)'"
        case let .readOnly(path):
            return "the entity store at \(path) was opened read-only; open it read-write to change it"
        case let .corrupt(reason):
            return "the entity store is damaged or foreign: \(reason); run `strata check` and restore from a backup"
        case let .invalidInterchange(reason):
            return "cannot import the entity document: \(reason)"
        case let .unsupportedLayout(found, supported):
            return "the entities in this store use layout \(found); this build reads layout \(supported): export them (`strata entities export`) with the build that wrote them and import them here"
        case let .failedOperation(reason):
            return "an earlier operation of this write failed (\(reason)), so the write cannot commit and wrote nothing; let errors leave the write body"
        }
    }
}

extension EntityError {
    /// Runs `body`, reporting the ordered-key coder's errors as `corrupt`. Inside the entity store
    /// only stored bytes reach that coder (keys, bodies, headers and log entries are all read with
    /// it), so an `OrderedKeyError` there means damaged or foreign bytes: the store's own error
    /// for that is `corrupt`, whichever read met them.
    static func reportingDamage<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let error as OrderedKeyError {
            throw EntityError.corrupt(reason: "\(error)")
        }
    }
}

extension EntityError {
    /// Throws `invalidDatestamp` for a NaN datestamp (`what` names it), before the operation
    /// reads or writes anything: every comparison with NaN is false, so a NaN entry would never
    /// be superseded, a compaction before NaN would drop nothing and an as-of read would answer
    /// from wherever NaN's key encoding sorts. Infinite datestamps are ordered and pass.
    @inline(__always)
    static func checkDatestamp(_ datestamp: Date?, _ what: StaticString) throws {
        if let datestamp, datestamp.timeIntervalSinceReferenceDate.isNaN { throw EntityError.invalidDatestamp(what: "\(what)") }
    }
}
