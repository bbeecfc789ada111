import Synchronization

/// The format key paths a datastore's reads have named, each resolved to its index's position in
/// `DatastoreSchema.indexes`, found again with a few plain loads: no lock, no retain.
///
/// Why: every query by index (`load(_:from:)`, ranges) names its index by a key path. Resolving it
/// projects the key path and compares definitions; the one-entry cache this replaces sat behind a
/// mutex (two atomic read-modify-writes per query, on top of the snapshot's own), and a datastore
/// queried through two indexes in turn missed it every other time.
///
/// Invariants:
/// - A key path is compared by identity only. Every key path in the table is also retained in
///   `retained`, for the life of the table, so its address cannot be reused by another object
///   while the table answers for it.
/// - A slot is written once: its position first, then its identity (releasing); a reader that
///   sees the identity (acquiring) sees the position. Empty slots hold identity 0 and come after
///   the filled ones. Appends are serialized by `retained`'s lock.
/// - At most `capacity` key paths are remembered; beyond that, `position(of:)` answers nil and the
///   caller resolves the key path the slow way each time (a format declares a handful of indexes,
///   and a key path literal is one object per call site, so the table fills only with odd use).
final class IndexKeyPathTable: @unchecked Sendable {
    static let capacity = 16

    private let identities: UnsafeMutablePointer<Atomic<UInt>>
    private let positions: UnsafeMutablePointer<Atomic<Int>>
    private let retained = Mutex<[RetainedKeyPath]>([])
    /// Set once every slot is taken: a full table skips the retain and the lock of `remember`,
    /// so key paths it cannot hold cost their slow resolution and nothing more.
    private let isFull = Atomic<Bool>(false)

    init() {
        identities = .allocate(capacity: Self.capacity)
        positions = .allocate(capacity: Self.capacity)
        for slot in 0..<Self.capacity {
            (identities + slot).initialize(to: Atomic<UInt>(0))
            (positions + slot).initialize(to: Atomic<Int>(0))
        }
    }

    deinit {
        identities.deinitialize(count: Self.capacity)
        identities.deallocate()
        positions.deinitialize(count: Self.capacity)
        positions.deallocate()
    }

    private static func identity(of keyPath: AnyKeyPath) -> UInt {
        UInt(bitPattern: ObjectIdentifier(keyPath))
    }

    /// The position remembered for `keyPath` (this very object), or nil.
    func position(of keyPath: AnyKeyPath) -> Int? {
        let wanted = Self.identity(of: keyPath)
        for slot in 0..<Self.capacity {
            let identity = identities[slot].load(ordering: .acquiring)
            if identity == wanted { return positions[slot].load(ordering: .relaxed) }
            if identity == 0 { return nil }
        }
        return nil
    }

    /// Remembers that `keyPath` names the index at `position` (nothing if the table is full).
    func remember(_ keyPath: AnyKeyPath, position index: Int) {
        guard !isFull.load(ordering: .relaxed) else { return }
        let entry = RetainedKeyPath(keyPath: keyPath)
        retained.withLock { retained in
            guard self.position(of: keyPath) == nil, retained.count < Self.capacity else { return }
            let slot = retained.count
            retained.append(entry)
            positions[slot].store(index, ordering: .relaxed)
            identities[slot].store(Self.identity(of: keyPath), ordering: .releasing)
            if retained.count == Self.capacity { isFull.store(true, ordering: .relaxed) }
        }
    }

    /// Whether every slot is taken (for tests).
    var isAtCapacity: Bool { isFull.load(ordering: .relaxed) }
}

/// A key path kept alive by `IndexKeyPathTable`. Key path objects are immutable (and only compared
/// by identity there), so sharing one between threads is safe although `AnyKeyPath` is not
/// declared `Sendable`.
private struct RetainedKeyPath: @unchecked Sendable {
    let keyPath: AnyKeyPath
}
