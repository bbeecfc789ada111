import StrataCore

/// What a change-log entry records happened to its identifier.
enum ChangeLogKind: UInt8 {
    case created = 1, updated = 2, deleted = 3
}

/// A change-log key: the commit's generation (u64 big-endian) then the change's sequence number
/// within it (u32 big-endian), so keys sort by commit, then by order of the changes. This type
/// builds and parses them.
struct ChangeLogKey: Equatable {
    let generation: UInt64
    let sequence: UInt32

    var bytes: [UInt8] {
        var key = [UInt8](repeating: 0, count: 12)
        key.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: generation.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: sequence.bigEndian, toByteOffset: 8, as: UInt32.self)
        }
        return key
    }

    /// The smallest key of `generation`: every key of it and of later generations sorts at or
    /// after this prefix, every key of earlier ones before it.
    static func start(of generation: UInt64) -> [UInt8] { withUnsafeBytes(of: generation.bigEndian) { Array($0) } }

    /// The generation a stored key belongs to; nil if it is too short to be a key.
    static func generation(of key: UnsafeRawBufferPointer) -> UInt64? {
        key.count >= 8 ? UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) : nil
    }
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
        let key = ChangeLogKey(generation: write.transactionID, sequence: sequence).bytes
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
        guard let oldest = try cursor.key().withUnsafeBytes({ ChangeLogKey.generation(of: $0) }) else { return }
        // Nothing is due before this generation whatever the readers: skip scanning the reader table.
        guard generation >= oldest &+ Self.logRetention &+ Self.logTrimBatch else { return }
        let oldestReader = write.database.oldestReaderSnapshot ?? generation
        guard min(oldestReader, generation) > Self.logRetention else { return }
        let bound = min(oldestReader, generation) - Self.logRetention
        guard oldest < bound, bound - oldest >= Self.logTrimBatch else { return }
        try write.deleteLeading(before: ChangeLogKey.start(of: bound), in: log, limit: Self.logTrimLimit)
    }
}
