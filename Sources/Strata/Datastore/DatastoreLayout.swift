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

/// What reading one declared index needs: its tree and whether its entries hold the instances.
/// Not generic, unlike `IndexInfo`, so the hot lookup paths need no type metadata for it.
struct IndexReadTarget: Sendable {
    let name: String
    let tree: String
    let isDirect: Bool
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
