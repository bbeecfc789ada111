import Foundation
import StrataCore

/// What a datastore looked like when its data was written; compared at open to find indexes that
/// must be (re)built.
struct DatastoreDescriptor: Codable, Equatable {
    var version: String
    var indexes: [IndexDescriptor]
}

struct IndexDescriptor: Codable, Equatable {
    /// The index's name, which names its tree (`DatastoreLayout.index(_:)`): compared by its bytes
    /// (`TreeName`), as the catalog compares tree names.
    var name: String
    var signature: String
    var isDirect: Bool

    static func == (a: IndexDescriptor, b: IndexDescriptor) -> Bool {
        TreeName.same(a.name, b.name) && a.signature == b.signature && a.isDirect == b.isDirect
    }

    /// Whether this stored descriptor describes the same index as `declared`. Stores written
    /// before signatures dropped the instance type's name recorded key paths with it
    /// (`oneToMany(String) \Book.title`, now `oneToMany(String) .title`): such a descriptor matches
    /// when each path is the declared one under any root type name. A read-write open rewrites
    /// the stored descriptor in the current form.
    func describesSameIndex(as declared: IndexDescriptor) -> Bool {
        guard TreeName.same(name, declared.name), isDirect == declared.isDirect else { return false }
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

extension DatastoreDescriptor {
    /// The key of the declaration in `<name>#info`.
    static let storageKey = "descriptor"

    /// The declaration recorded in `<name>#info`, if any.
    static func stored(in context: StoreReadContext, layout: DatastoreLayout) throws -> DatastoreDescriptor? {
        guard let info = try context.tree(layout.info), let bytes = try context.transaction.get(storageKey, in: info) else {
            return nil
        }
        return try? JSONDecoder().decode(DatastoreDescriptor.self, from: Data(bytes.bytes))
    }
}

