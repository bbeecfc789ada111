import Foundation
import StrataCore

/// Where a datastore lives in the engine: one tree per role, all named after the datastore.
///
///     <name>              identifier -> instance envelope
///     <name>#index.<idx>  index value ++ identifier -> empty (reference) or envelope (direct)
///     <name>#log          (generation u64 BE, sequence u32 BE) -> kind u8 ++ identifier
///     <name>#info         "descriptor" -> JSON DatastoreDescriptor
struct DatastoreLayout: Sendable {
    let name: String
    var primary: String { name }
    var log: String { name + "#log" }
    var info: String { name + "#info" }
    func index(_ indexName: String) -> String { name + "#index." + indexName }
}

/// One declared index, resolved against the format instance.
struct IndexInfo<Instance>: Sendable {
    let name: String
    let tree: String
    let definition: IndexDefinition<Instance>
    let isDirect: Bool

    var descriptor: IndexDescriptor {
        IndexDescriptor(name: name, signature: definition.signature, isDirect: isDirect)
    }
}

/// What a datastore looked like when its data was written; compared at open to find indexes that
/// must be (re)built.
struct DatastoreDescriptor: Codable, Equatable {
    var version: String
    var indexes: [IndexDescriptor]
}

struct IndexDescriptor: Codable, Equatable {
    var name: String
    var signature: String
    var isDirect: Bool

    /// Whether this stored descriptor describes the same index as `declared`. Stores written
    /// before signatures dropped the instance type's name recorded key paths with it
    /// (`oneToMany(String) \Book.title`, now `oneToMany(String) .title`): such a descriptor matches
    /// when each path is the declared one under any root type name. A read-write open rewrites
    /// the stored descriptor in the current form.
    func describesSameIndex(as declared: IndexDescriptor) -> Bool {
        guard name == declared.name, isDirect == declared.isDirect else { return false }
        if signature == declared.signature { return true }
        // "kind(value type) " ends where the paths begin (the value type may hold ", " itself).
        guard let pathsStart = declared.signature.range(of: ") .")?.upperBound else { return false }
        let head = declared.signature[..<declared.signature.index(before: pathsStart)]
        guard signature.hasPrefix(head) else { return false }
        let storedPaths = signature.dropFirst(head.count).components(separatedBy: ", ")
        let declaredPaths = declared.signature[declared.signature.index(before: pathsStart)...].components(separatedBy: ", ")
        return storedPaths.count == declaredPaths.count && zip(storedPaths, declaredPaths).allSatisfy { stored, path in
            path.hasPrefix(".") && stored.hasPrefix("\\") && stored.hasSuffix(path) && stored.count > path.count + 1
        }
    }
}

enum IndexDiscovery {
    /// Finds the indexes a format declares: its stored properties holding index representations
    /// (a `@Direct` wrapper's storage is named `_name`; the index is called `name`).
    static func indexes<F: DatastoreFormat>(of format: F, layout: DatastoreLayout) -> [IndexInfo<F.Instance>] {
        var found: [IndexInfo<F.Instance>] = []
        for child in Mirror(reflecting: format).children {
            guard var name = child.label else { continue }
            var value = child.value
            var isDirect = false
            if let marker = value as? DirectIndexMarker {
                value = marker.markedIndex
                isDirect = true
                if name.hasPrefix("_") { name.removeFirst() }
            }
            guard let index = value as? any IndexRepresentation<F.Instance> else { continue }
            found.append(IndexInfo(name: name, tree: layout.index(name), definition: index.definition, isDirect: isDirect))
        }
        return found.sorted { $0.name < $1.name }
    }
}
