extension Database {
    /// The reader table as this process sees it: every claimed slot, live or not yet reaped.
    public func readerSlots() -> [ReaderSlotInfo] { readers.entries() }

    /// Frees reader slots whose processes died (their slot lock is no longer held). The writer also
    /// does this by itself when an old snapshot holds back page reuse. Returns how many were freed.
    @discardableResult
    public func reapDeadReaders() -> Int { readers.reapDeadReaders() }

    /// How many reader slots the lock file has.
    public var readerCapacity: Int { readers.capacity }
}
