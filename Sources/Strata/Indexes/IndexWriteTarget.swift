/// One declared index as the write path uses it: `IndexInfo` with its definition type-erased.
///
/// The write path is generic code that is not specialized for the user's format, and there every
/// use of `IndexInfo<F.Instance>` (or of an array of them) looks its generic metadata up at run
/// time, once per write. This type has none; the writer casts `definition` back to
/// `IndexDefinition<F.Instance>` without a check, which is sound because a schema builds its
/// targets from its own `IndexInfo`s (`DatastoreSchema.writeTargets`).
///
/// A class, not a struct: the writer takes each target out of the schema's array on every write,
/// and a struct copy retained and released its two names and its definition (about 200
/// instructions per index and write); a reference is one retain.
final class IndexWriteTarget: @unchecked Sendable {
    let name: String
    let tree: String
    let isDirect: Bool
    let isUnique: Bool
    /// The `IndexDefinition<F.Instance>` of the schema's format (immutable, see its declaration).
    let definition: AnyObject

    init<Instance>(_ info: IndexInfo<Instance>) {
        name = info.name
        tree = info.tree
        isDirect = info.isDirect
        isUnique = info.definition.kind.isUnique
        definition = info.definition
    }
}
