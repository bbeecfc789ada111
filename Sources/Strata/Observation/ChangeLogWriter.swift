import StrataCore

/// What a change-log entry records happened to its identifier.
enum ChangeLogKind: UInt8 {
    case created = 1, updated = 2, deleted = 3
}

/// Appending to a datastore's change log (`<name>#log`, see `DatastoreLayout`), which observers in
/// any process read. Not generic: the log holds identifier bytes only, so whole-datastore
/// operations that know no format (`Store.clear()`) log through the same code.
extension StoreWriteContext {
    /// Entries older than this many generations (and older than every live reader) are trimmed.
    static var logRetention: UInt64 { 1024 }
    /// Trimming waits until this many generations of entries are due, so the start of the log is
    /// rewritten once per that many commits instead of on every one (entries live at most
    /// `logRetention + logTrimBatch` generations).
    static var logTrimBatch: UInt64 { 64 }
    /// At most this many entries are trimmed per commit (a log left long untrimmed, e.g. after a
    /// bulk load, is worked off over a few commits).
    static var logTrimLimit: Int { 16384 }

    /// Appends `(generation, sequence) -> kind ++ idBytes` to the log tree `logName`.
    func appendChange(_ kind: UInt8, idBytes: [UInt8], toLog logName: String) throws {
        let log = try writableTree(logName)
        let sequence = logSequence[logName, default: 0]
        if sequence == 0 { try trimLog(log) }
        logSequence[logName] = sequence + 1
        var key = [UInt8](repeating: 0, count: 12)
        key.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: write.transactionID.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: sequence.bigEndian, toByteOffset: 8, as: UInt32.self)
        }
        var value: [UInt8] = []
        value.reserveCapacity(1 + idBytes.count)
        value.append(kind)
        value.append(contentsOf: idBytes)
        try write.put(key, value, in: log)
    }

    /// Observers hold a snapshot at the generation they have seen, so nothing a live observer
    /// still needs is older than the oldest reader snapshot.
    private func trimLog(_ log: Tree) throws {
        let generation = write.transactionID
        // Reading the first key touches no page; deleting copies the start of the log.
        let cursor = try write.cursor(log)
        guard try cursor.first() else { return }
        let first = try cursor.key()
        guard first.count >= 8 else { return }
        let oldest = first.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
        // Nothing is due before this generation whatever the readers: skip scanning the reader table.
        guard generation >= oldest &+ Self.logRetention &+ Self.logTrimBatch else { return }
        let oldestReader = write.database.oldestReaderSnapshot ?? generation
        guard min(oldestReader, generation) > Self.logRetention else { return }
        let bound = min(oldestReader, generation) - Self.logRetention
        guard oldest < bound, bound - oldest >= Self.logTrimBatch else { return }
        // Keys are (generation, sequence): every key below the 8-byte generation `bound` is older.
        try write.deleteLeading(before: withUnsafeBytes(of: bound.bigEndian) { Array($0) }, in: log, limit: Self.logTrimLimit)
    }
}
