import Synchronization

/// The per-datastore write state of a store's last finished write context — each datastore's
/// `DatastoreTrees` (with its reused buffers) and each change log's `ChangeLogAppender` — handed
/// to the next context, so that a transaction of one write does not allocate and free them again.
///
/// Safe to hand on because nothing in that state outlives its transaction's meaning: tree handles
/// are re-checked on every use (`DatastoreTrees`, `ChangeLogAppender`: a handle of a finished
/// transaction is never open), an appender's position in its log is forgotten when the state is
/// taken (`forgetPosition`), and buffers are kept empty (`give` empties the instance buffers, which
/// hold the last instance's identifier and envelope until then; `WriteScratch` is emptied after
/// every write), so no user data outlives its context. The state is given back only when
/// its context is freed, that is when no writer of it (which holds the context) is left to touch
/// it; it then goes to one context at a time (the next one to take it).
final class WriteContextReuse: Sendable {
    /// A context's lists, as `StoreWriteContext` keeps them.
    struct State: @unchecked Sendable {
        var changeLogs: [ChangeLogAppender]
        var datastoreTrees: [(schema: ObjectIdentifier, trees: DatastoreTrees)]
    }

    /// Contexts that wrote more datastores (or change logs) than this do not hand their state
    /// on (their schemas would be kept alive, and the lists searched in order, for every later
    /// write).
    static let maximumDatastores = 8
    /// Nor do contexts whose buffers grew beyond this many bytes in all (one large write would
    /// otherwise pin its buffers for the store's lifetime).
    static let maximumBufferBytes = 1 << 20

    private let spare = Mutex<State?>(nil)

    /// The spare state, if any, ready for a new context (no appender knows a position).
    func take() -> State? {
        guard let state = spare.withLock({ spare -> State? in
            let taken = spare
            spare = nil
            return taken
        }) else { return nil }
        for appender in state.changeLogs { appender.forgetPosition() }
        return state
    }

    /// Keeps `state` of a freed context for the next one (unless one is kept already).
    func give(_ state: State) {
        guard !state.datastoreTrees.isEmpty, state.datastoreTrees.count <= Self.maximumDatastores,
              state.changeLogs.count <= Self.maximumDatastores else { return }
        let bufferBytes = state.datastoreTrees.reduce(0) { $0 + $1.trees.scratch.capacityInBytes + $1.trees.instanceBuffers.capacityInBytes }
        guard bufferBytes <= Self.maximumBufferBytes else { return }
        // The context is freed: nothing else refers to its buffers, emptying them copies nothing.
        for (_, trees) in state.datastoreTrees { trees.instanceBuffers.empty() }
        spare.withLock { spare in
            if spare == nil { spare = state }
        }
    }
}
