import StrataCore

/// The trees one datastore writes in one write context — its primary tree, the tree of each
/// index (by the schema's index position) and its change log — opened or created on first use.
///
/// A handle is reused only while the transaction still accepts it (`Transaction.isOpen`); it is
/// opened again after a savepoint that created its tree rolled back, or after the datastore was
/// removed and created again in the same transaction.
final class DatastoreTrees {
    /// Held so that the schema, whose identity keys this object in its context, cannot be freed
    /// and another one allocated at its address while the context lives.
    private let schema: AnyObject
    // No runtime exclusivity checks on these (read on every write): a context and what it holds
    // are used by one thread at a time (an async body may resume on another pool thread, and a
    // group commit runs each request's body on the leader's thread, both with a happens-before
    // hand-over), and no access to them overlaps another.
    @exclusivity(unchecked) private var primaryTree: Tree?
    @exclusivity(unchecked) private var indexTrees: [Tree?] = []
    let log: ChangeLogAppender
    /// Buffers reused by this datastore's writes in this context (see `WriteScratch`).
    @exclusivity(unchecked) var scratch = WriteScratch()
    /// The identifier and envelope buffers reused by this datastore's writes in this context.
    @exclusivity(unchecked) var instanceBuffers = InstanceBuffers()

    init(schema: AnyObject, log: ChangeLogAppender) {
        self.schema = schema
        self.log = log
    }

    func primary(named name: String, in context: StoreWriteContext) throws -> Tree {
        if let tree = primaryTree, context.write.isOpen(tree) { return tree }
        let tree = try context.writableTree(name)
        primaryTree = tree
        return tree
    }

    func index(at position: Int, named name: String, in context: StoreWriteContext) throws -> Tree {
        if position < indexTrees.count, let tree = indexTrees[position], context.write.isOpen(tree) { return tree }
        let tree = try context.writableTree(name)
        if position >= indexTrees.count { indexTrees.append(contentsOf: repeatElement(nil, count: position + 1 - indexTrees.count)) }
        indexTrees[position] = tree
        return tree
    }

    /// The tree of the index at `position`, which `index(at:named:in:)` opened earlier in the
    /// same write: a write collects its index entries (opening their trees), then applies them.
    /// The handle is not re-checked here; the transaction refuses a handle it no longer accepts
    /// with a typed error, as it would any other.
    func openedIndex(at position: Int) -> Tree {
        guard position < indexTrees.count, let tree = indexTrees[position] else {
            preconditionFailure("index tree \(position) used before it was opened in this write")
        }
        return tree
    }
}

extension StoreWriteContext {
    /// The trees of the datastore described by `schema` in this context.
    func trees<F: DatastoreFormat>(of schema: DatastoreSchema<F>) -> DatastoreTrees {
        let key = ObjectIdentifier(schema)
        if let entry = datastoreTrees.first(where: { $0.schema == key }) { return entry.trees }
        let trees = DatastoreTrees(schema: schema, log: changeLog(schema.layout.log))
        datastoreTrees.append((key, trees))
        return trees
    }
}
