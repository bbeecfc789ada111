import StrataCore
import Synchronization

/// What a store remembers about its change logs from one write transaction to the next: for each
/// log, a generation at or below its oldest entry, so that the first append of a commit can tell
/// that nothing is due for trimming without reading the log (`ChangeLogTrimming`).
///
/// Invariant: a remembered generation is never above the log's oldest entry. It is recorded only
/// when read from a log the reading transaction had not changed (the committed state, which no
/// rollback takes back), and a log's oldest entry only ever grows afterwards: entries are
/// appended with the newest generation and removed from the old end; a log dropped and created
/// again starts at a newer generation. A value that is too low only costs a read of the log.
/// A rename breaks the "only grows" rule (an older log takes over the name), so the typed layer
/// forgets the name when it renames a datastore (`DatastoreRename`). Raw engine calls that rename
/// an older tree onto a log's name bypass that; the only effect would be trimming that comes at
/// most `retention + batch` generations late, never an entry lost (the trim itself reads the log).
///
/// Each log's generation lives in a `Slot` that an appender looks up once (`slot(for:)`) and then
/// reads and writes without the lock and the dictionary (~390 instructions of every commit's
/// first append). Slots are keyed by the log name's UTF-8 bytes (`TreeName.Key`), as the catalog
/// keys trees: keyed by `String`, two logs whose names are only canonically equivalent would share one.
final class ChangeLogMemory: Sendable {
    private let slots = Mutex<[TreeName.Key: Slot]>([:])

    /// What is remembered about one log.
    final class Slot: Sendable {
        /// The remembered generation; 0 when none is (a log's entries have generations >= 1).
        private let generation = Atomic<UInt64>(0)

        /// A generation at or below the log's oldest entry, if one is known.
        var oldestGeneration: UInt64? {
            let value = generation.load(ordering: .acquiring)
            return value == 0 ? nil : value
        }

        /// Records that the log held no entry older than `oldest` in a committed state.
        func remember(oldestGeneration oldest: UInt64) { generation.store(oldest, ordering: .releasing) }

        func forget() { generation.store(0, ordering: .releasing) }
    }

    /// The slot of `log` (the same one for every caller asking for that name).
    func slot(for log: String) -> Slot {
        let key = TreeName.Key(log)
        return slots.withLock { slots in
            if let slot = slots[key] { return slot }
            let slot = Slot()
            slots[key] = slot
            return slot
        }
    }

    /// A generation at or below the oldest entry of `log`, if one is known.
    func oldestGeneration(of log: String) -> UInt64? { slot(for: log).oldestGeneration }

    /// Records that `log` held no entry older than `generation` in a committed state.
    func remember(oldestGeneration generation: UInt64, of log: String) {
        slot(for: log).remember(oldestGeneration: generation)
    }

    /// Forgets what was known about `log` (its name now holds another, possibly older, log).
    /// Always safe: the next append reads the log and remembers afresh.
    func forget(_ log: String) {
        slot(for: log).forget()
    }
}
