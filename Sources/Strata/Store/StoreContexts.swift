import StrataCore

/// A read transaction of a `Store`: `tx[datastore]` reads that datastore in this snapshot.
public class StoreReadContext {
    let transaction: Transaction

    init(transaction: Transaction) {
        self.transaction = transaction
    }

    /// The committed generation this snapshot reads (a write context: the one it builds on).
    public var generation: UInt64 { transaction.generation }

    public subscript<F: DatastoreFormat, A: StoreAccess>(datastore: Datastore<F, A>) -> DatastoreReader<F> {
        DatastoreReader(context: self, schema: datastore.schema)
    }

    func tree(_ name: String) throws -> Tree? { try transaction.treeIfPresent(name) }
}

/// The write transaction of a `Store`: `tx[datastore]` reads and writes that datastore; everything
/// done through one context commits together.
public final class StoreWriteContext: StoreReadContext {
    let write: WriteTransaction
    /// The change logs this context appended to, by log tree name.
    var changeLogs: [String: ChangeLogAppender] = [:]
    /// The open trees of each datastore written in this context, by its schema's identity, so a
    /// loop of `tx[books].persist(…)` opens each tree once. (Not the writers themselves: a writer
    /// holds its context, and the context holding it back would leak both.)
    var datastoreTrees: [ObjectIdentifier: DatastoreTrees] = [:]

    init(transaction: WriteTransaction) {
        write = transaction
        super.init(transaction: transaction)
    }

    public subscript<F: DatastoreFormat>(datastore: Datastore<F, ReadWrite>) -> DatastoreWriter<F> {
        DatastoreWriter(context: self, schema: datastore.schema)
    }

    func writableTree(_ name: String) throws -> Tree { try write.openOrCreateTree(name) }
}
