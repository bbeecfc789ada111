/// One reader of the store, as the writer (or `strata readers`) sees it.
public struct ReaderInfo: Sendable, Equatable {
    /// The reader-table slot, or -1 for a reader without write access to the lock file, which
    /// pins its snapshot with a read lock instead (see `Database`): the kernel reports the
    /// generation it pins, not its pid (0) or its age (0).
    public let slot: Int
    public let pid: Int32
    /// The generation it reads; 0 when the slot is claimed but no transaction is open.
    public let snapshot: UInt64
    /// How many generations it is behind the newest commit.
    public let lag: UInt64
    /// Seconds since its snapshot was taken.
    public let age: Double
    /// Free pages the writer cannot reuse while this snapshot lives (freed by later commits).
    public internal(set) var pinnedPages: UInt64
    /// False for a slot whose process died and that has not been reaped yet.
    public let isAlive: Bool
    public let isThisHandle: Bool
}

extension Database {
    /// Frees reader slots whose processes died (their slot lock is no longer held). The writer also
    /// does this by itself when an old snapshot holds back page reuse. Returns how many were freed.
    @discardableResult
    public func reapDeadReaders() -> Int {
        // A handle that may not write the lock file cannot free slots (and has no dead pins to
        // free: the kernel drops a dead process's locks).
        guard case .readerTable = registration else { return 0 }
        return readers.reapDeadReaders()
    }

    /// How many reader slots the lock file has.
    public var readerCapacity: Int { readers.capacity }

    /// Every claimed reader slot with its lag, age, pinned pages and liveness.
    public func readerReport() throws -> [ReaderInfo] {
        let current = generation
        let slots = try readers.entries(current: current, now: Clock.wallNanoseconds())
        // Pages freed by commit T are held back by every snapshot S <= T: count them once per
        // distinct snapshot from the free tree of the current generation.
        let freedByGeneration = try read { transaction -> [(UInt64, UInt64)] in
            var counts: [(UInt64, UInt64)] = []
            let cursor = Cursor(access: transaction.access, record: transaction.freeTree)
            var more = try cursor.first()
            while more {
                let key = try cursor.key()
                let freedBy = try key.withUnsafeBytes { try FreeRecordKey.freedBy(of: $0, in: transaction.freeTree) }
                counts.append((freedBy, UInt64(try cursor.value().count / 8)))
                more = try cursor.next()
            }
            counts += try transaction.carriedFree().groups.map { ($0.freedBy, UInt64($0.pages.count)) }
            return counts
        }
        func pinnedPages(by snapshot: UInt64) -> UInt64 {
            freedByGeneration.filter { $0.0 >= snapshot && $0.0 != 0 }.reduce(0) { $0 + $1.1 }
        }
        let tableReaders = slots.map { slot in
            var reader = slot
            reader.pinnedPages = slot.snapshot == 0 ? 0 : pinnedPages(by: slot.snapshot)
            return reader
        }
        if case .detached = registration { return tableReaders }
        // Readers without write access hold pins, not slots: the kernel tells which generations,
        // not which process or since when. A pin never outlives its process.
        let pins = try SnapshotPins.pinnedGenerations(in: lockFile.file, below: current + 1).map { snapshot in
            ReaderInfo(slot: -1, pid: 0, snapshot: snapshot, lag: current - snapshot, age: 0,
                       pinnedPages: pinnedPages(by: snapshot), isAlive: true, isThisHandle: false)
        }
        return tableReaders + pins
    }

    /// Live readers whose snapshot is older than `seconds`.
    public func longLivedReaders(olderThan seconds: Double) throws -> [ReaderInfo] {
        try readerReport().filter { $0.isAlive && $0.snapshot != 0 && $0.age > seconds }
    }
}

extension Database {
    /// The oldest generation a registered reader (in any process, with a reader slot or a
    /// read-only reader's pin) may still be reading, or nil.
    public var oldestReaderSnapshot: UInt64? {
        (try? oldestRegisteredSnapshot(below: generation &+ 1)) ?? readers.oldestSnapshot()
    }
}
