import StrataCore

/// Trimming of a change log: a tree whose keys begin with the generation that committed the
/// entry (u64 big-endian). The typed layer's datastore logs (`ChangeLogWriter.swift`) and the
/// entity store's log (`StrataEntities`) both trim through this one function.
///
/// Observers hold a snapshot at the generation they have reported, so nothing a live observer
/// still needs is older than the oldest reader snapshot. Entries older than `retention`
/// generations and than every live reader are trimmed, but only once `batch` generations of them
/// are due, so the start of the log is rewritten once per that many commits instead of on every
/// one (entries live at most `retention + batch` generations), and at most `limit` entries per
/// commit (a log left long untrimmed, e.g. after a bulk load, is worked off over a few commits).
public enum ChangeLogTrimming {
    /// Entries of at least this many newest generations are kept.
    public static let retention: UInt64 = 1024
    /// Trimming waits until this many generations of entries are due.
    public static let batch: UInt64 = 64
    /// At most this many entries are trimmed per call.
    public static let limit = 16384

    /// Trims `log` as described above, in `transaction` (call it once per commit that appends).
    /// Reading the first key touches no page; deleting copies the start of the log.
    /// - Throws: `StrataError` from the engine, or the caller's error from `corrupt` (given the
    ///   key's length) when the log's first key is too short to hold a generation.
    public static func trim(_ log: Tree, in transaction: WriteTransaction, corrupt: (_ keyLength: Int) -> any Error) throws {
        _ = try trim(log, in: transaction, oldestAtLeast: nil, corrupt: corrupt)
    }

    /// `trim(_:in:corrupt:)` given `known`, a generation at or below the log's oldest entry (see
    /// `ChangeLogMemory`): while nothing can be due even at that generation, the log is not read.
    /// Returns the generation of the oldest entry it read before trimming, nil if it read none.
    static func trim(_ log: Tree, in transaction: WriteTransaction, oldestAtLeast known: UInt64?,
                     corrupt: (_ keyLength: Int) -> any Error) throws -> UInt64? {
        let generation = transaction.transactionID
        if let known, generation < known &+ retention &+ batch { return nil }
        let cursor = try transaction.cursor(log)
        guard try cursor.first() else { return nil }
        let first = try cursor.key()
        guard first.count >= 8 else { throw corrupt(first.count) }
        let oldest = first.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
        // Nothing is due before this generation whatever the readers: skip scanning the reader table.
        guard generation >= oldest &+ retention &+ batch else { return oldest }
        let horizon = min(transaction.database.oldestReaderSnapshot ?? generation, generation)
        guard horizon > retention else { return oldest }
        let bound = horizon - retention
        guard oldest < bound, bound - oldest >= batch else { return oldest }
        try transaction.deleteLeading(before: withUnsafeBytes(of: bound.bigEndian) { Array($0) }, in: log, limit: limit)
        return oldest
    }
}
