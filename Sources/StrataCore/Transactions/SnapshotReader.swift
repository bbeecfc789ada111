/// The reusable part of a `ReadSnapshot`, pooled per handle (see `IdlePool`): a page access, the
/// state of the generation it last read, and, for a handle that registers readers in the reader
/// table, a reader slot it keeps for its whole life — LMDB's reader slot bound to a read
/// transaction, which `mdb_txn_renew` only re-publishes. Beginning a snapshot of an unchanged
/// generation is then: load the generation, publish it in the slot, re-load it, and point the
/// access at the snapshot; ending it is one store of 0 in the slot. No allocation, no lock, no
/// meta copy, no catalog lookup.
///
/// Slot invariants (the protocol itself is `ReaderTable`'s):
/// - The slot is claimed once, when the reader is made, and is in use locally (`ReaderTable`
///   never hands it to another read) until `deinit` gives it back; in between it reads as idle
///   (snapshot 0) to the writer except during `begin()...end()`.
/// - Its liveness is the slot lock held by the handle, as for every slot: a killed process's slot
///   is reaped like any other.
/// - Readers live in a pool of `IdlePool.capacity` per handle; one that finds the pool full is
///   deallocated and its slot becomes one of the handle's idle slots (as a pooled transaction's
///   does), so readers keep at most that many slots out of the other reads' reach.
///   A slot claim that finds the table full first drains the idle readers (`Database.claimSlot`).
/// - `Database` drains its pool before it gives its slots back (close, deinit), so no pooled
///   reader ever writes a slot its handle no longer owns. One exception to the first drain: a
///   reader whose `withSnapshot` ends while `close()` runs may park after close's drain
///   (`Database.endSnapshot` explains the race). Its slot is still the handle's then: close
///   releases only slots idle locally, and a reader's is in use locally for its whole life; and
///   deinit's drain frees the reader before deinit releases the slots. So the invariant holds.
///   A reader kept alive past its handle by a `ReadSnapshot` let out of `withSnapshot` gives its
///   slot back only if the handle still owns it (`ReaderTable.releaseSlotIfOwnedLocally`); its
///   `end()` already ran when the call returned.
final class SnapshotReader {
    let access: PageAccess
    private let readers: ReaderTable
    /// The reader-table slot this reader keeps (nil: the handle registers snapshots otherwise).
    private let slot: Int?
    /// The slot's fields (meaningful only with a slot).
    private let fields: ReaderTable.SlotFields?
    /// What a snapshot outside the reader table holds until `end()`.
    private var claim: SnapshotClaim?
    /// The handle's pool slot reserved for this reader while it is out of the pool
    /// (`IdlePool.takeReserving(slot:)`); nil for a new reader, which parks in any free slot.
    var poolSlot: Int?
    /// The state of the generation last read. Set only through `remember(_:)`, which keeps the
    /// plain copies below in step with it.
    private var state: GenerationState?
    /// `state`, unretained: the hot path reads through it without retaining and releasing the
    /// state (two atomic operations per read). Valid while `state` holds the same object.
    private var unretainedState: Unmanaged<GenerationState>?
    /// `state`'s generation, page count and commit time, as plain values for the same reason.
    private(set) var generation: UInt64 = 0
    private(set) var pageCount: UInt64 = 0
    private(set) var commitTime: UInt64 = 0

    init(database: Database) throws {
        access = PageAccess(pageSize: database.pageSize, pageChecksum: database.pageChecksum,
                            base: try database.mapping.base(covering: 0), committedPageCount: 0,
                            mapping: database.mapping, isWritable: false, verifiesChecksums: database.options.verifyChecksums)
        readers = database.readers
        if case .readerTable = database.registration {
            let slot = try database.claimSlot()
            self.slot = slot
            fields = database.readers.fields(of: slot)
        } else {
            slot = nil
            fields = nil
        }
    }

    deinit {
        // A reader normally dies in its handle's pool drain, while the handle owns the slot. One
        // kept alive by an escaped `ReadSnapshot` may die after the handle gave the slot back.
        if let slot { readers.releaseSlotIfOwnedLocally(slot) }
    }

    /// The state of the snapshot begun last (valid between `begin` and `end`).
    var current: GenerationState { state! }

    /// Makes `state` the current one (with its plain copies).
    private func remember(_ state: GenerationState) {
        self.state = state
        unretainedState = Unmanaged.passUnretained(state)
        generation = state.generation
        pageCount = state.meta.pageCount
        commitTime = state.meta.commitTime
    }

    /// Registers a snapshot of the newest generation of `database` and points the access at it.
    func begin(_ database: Database) throws {
        // The common case: the generation read last time is still the newest. One round of the
        // publication protocol in the kept slot, and the access reads the same pages as before.
        // (`generation` and `pageCount` are `state`'s, read without retaining it.)
        if let fields, unretainedState != nil, fields.publishCurrent() == generation {
            access.renew(committedPageCount: pageCount, newestTransaction: .max)
            return
        }
        let state: GenerationState
        var newestTransaction = UInt64.max
        if let fields {
            do {
                state = try database.registeredState(register: { fields.publish(generation: $0) }, withdraw: { _ in })
            } catch {
                fields.retire() // the slot may show a generation it never validated
                throw error
            }
            fields.setPageCount(state.meta.pageCount)
        } else {
            let (claim, meta) = try database.claimSnapshot()
            self.claim = claim
            state = self.state.flatMap { $0.generation == meta.transactionID ? $0 : nil } ?? database.snapshots.remember(meta)
            newestTransaction = database.newestReadableTransaction(claim, meta: meta)
        }
        do {
            let base = try database.mapping.base(covering: Int(state.meta.pageCount) * database.pageSize)
            access.renew(base: base, committedPageCount: state.meta.pageCount, newestTransaction: newestTransaction)
        } catch {
            end(database)
            throw error
        }
        remember(state)
    }

    /// The record of the tree called `name` in the current snapshot, or nil if it has none.
    @inline(__always)
    func record(ofTree name: String) throws -> TreeRecord? {
        // The state is held by `self.state` for as long as this call can use it (only `begin`
        // replaces it, on the thread that owns this reader), so it needs no retain here.
        guard let unretainedState else { throw StrataError.misuse("a snapshot reader was read before its first snapshot began") }
        return try unretainedState._withUnsafeGuaranteedRef { try $0.tree(named: name, access: access) }
    }

    /// Ends the snapshot: handed-out views and scans stop working, and the writer may reuse its pages.
    func end(_ database: Database) {
        access.endLease()
        if let fields {
            fields.retire()
        } else if let claim {
            database.releaseSnapshot(claim)
            self.claim = nil
        }
    }
}
