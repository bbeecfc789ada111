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
    /// The change logs this context appended to (one per log tree name). A context writes a
    /// handful of datastores: a list searched in order costs less than hashing the names.
    @exclusivity(unchecked) var changeLogs: [ChangeLogAppender] = []
    /// The open trees of each datastore written in this context, by its schema's identity, so a
    /// loop of `tx[books].persist(…)` opens each tree once.
    @exclusivity(unchecked) var datastoreTrees: [(schema: ObjectIdentifier, trees: DatastoreTrees)] = []

    /// The store's memory of its change logs across transactions (see `ChangeLogMemory`).
    let changeLogMemory: ChangeLogMemory

    /// Where this context's per-datastore state comes from and goes back to (see `WriteContextReuse`).
    private let reuse: WriteContextReuse?

    init(transaction: WriteTransaction, changeLogMemory: ChangeLogMemory, reuse: WriteContextReuse? = nil) {
        write = transaction
        self.changeLogMemory = changeLogMemory
        self.reuse = reuse
        if let state = reuse?.take() {
            changeLogs = state.changeLogs
            datastoreTrees = state.datastoreTrees
        }
        super.init(transaction: transaction)
    }

    deinit {
        reuse?.give(WriteContextReuse.State(changeLogs: changeLogs, datastoreTrees: datastoreTrees))
    }

    /// The writer `tx[datastore]` returned last and its schema's identity, so that a loop of
    /// `tx[books].persist(…)` allocates one writer. The writer holds the schema (whose identity
    /// therefore cannot be reused meanwhile) and this context: the cycle is broken when the body
    /// ends (`endBody`), after which nothing is cached. A writer keeps no state of its own that a
    /// savepoint, a dropped or renamed datastore could make stale: its trees are re-checked on
    /// every use (`DatastoreTrees`).
    /// (No runtime exclusivity checks on the context's state: one thread at a time uses it — the
    /// one running its transaction's body, handed over with a happens-before edge when an async
    /// body resumes elsewhere — and no access to it overlaps another.)
    @exclusivity(unchecked) private var lastWriter: (schema: ObjectIdentifier, writer: AnyObject)?
    @exclusivity(unchecked) private var isBodyRunning = true

    public subscript<F: DatastoreFormat>(datastore: Datastore<F, ReadWrite>) -> DatastoreWriter<F> {
        let schema = ObjectIdentifier(datastore.schema)
        // The identity names a `DatastoreSchema<F>`, so the writer cached for it is a `DatastoreWriter<F>`.
        if let lastWriter, lastWriter.schema == schema { return unsafeDowncast(lastWriter.writer, to: DatastoreWriter<F>.self) }
        let writer = DatastoreWriter(writeContext: self, schema: datastore.schema)
        if isBodyRunning { lastWriter = (schema, writer) }
        return writer
    }

    /// Runs the transaction's body with this context, then drops the cached writer.
    func run<Result>(_ body: (StoreWriteContext) throws -> Result) rethrows -> Result {
        defer { endBody() }
        return try body(self)
    }

    /// The body returned or threw: release the cached writer (which holds this context) and
    /// cache none from now on.
    func endBody() {
        isBodyRunning = false
        lastWriter = nil
    }

    func writableTree(_ name: String) throws -> Tree { try write.openOrCreateTree(name) }
}
