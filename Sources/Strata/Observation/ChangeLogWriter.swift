import StrataCore

/// What a change-log entry records happened to its identifier.
enum ChangeLogKind: UInt8 {
    case created = 1, updated = 2, deleted = 3
}

/// A change-log key: the commit's generation (u64 big-endian) then the change's sequence number
/// within it (u32 big-endian), so keys sort by commit, then by order of the changes (and begin
/// with the generation, as `ChangeLogTrimming` needs). This type builds and parses them; it
/// lends its bytes from the stack (no array per appended change).
struct ChangeLogKey: Equatable, BytesConvertible {
    let generation: UInt64
    let sequence: UInt32

    static let size = 12

    var bytes: [UInt8] { withBytes { Array($0) } }

    func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        var words: (UInt64, UInt32) = (generation.bigEndian, sequence.bigEndian)
        // The tuple's two fields are contiguous: 8 bytes, then 4 (its padding is not lent).
        return try withUnsafeBytes(of: &words) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<Self.size])) }
    }

    /// The smallest key of `generation`: every key of it and of later generations sorts at or
    /// after this prefix, every key of earlier ones before it.
    static func start(of generation: UInt64) -> [UInt8] { withUnsafeBytes(of: generation.bigEndian) { Array($0) } }

    /// The generation a stored key belongs to; nil if it is too short to be a key.
    static func generation(of key: UnsafeRawBufferPointer) -> UInt64? {
        key.count >= 8 ? UInt64(bigEndian: key.loadUnaligned(as: UInt64.self)) : nil
    }

    /// The key stored as `key`; nil if it is not 12 bytes.
    init?(parsing key: UnsafeRawBufferPointer) {
        guard key.count == Self.size else { return nil }
        generation = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
        sequence = UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt32.self))
    }

    init(generation: UInt64, sequence: UInt32) {
        self.generation = generation
        self.sequence = sequence
    }
}

/// Appends to one datastore's change log within one `StoreWriteContext`, keeping its tree handle
/// and the next sequence number so an append costs one put.
///
/// Invariant: keys are unique within a commit. Several contexts can write into one commit
/// (requests grouped by group commit each get a context of their own), so the next sequence
/// number is learned from the log itself — after the last key of this generation — the first
/// time a context appends, and again after a savepoint rolled back (`forgetPosition`). A
/// counter that started at 0 in every context made grouped requests overwrite each other's
/// entries, and observers missed those changes.
///
/// The common first append of a commit reads nothing: a log whose tree record says this
/// transaction has not changed it (`TreeRecord.lastModified`, which a rolled-back savepoint
/// restores) holds no entry of this generation, so its sequence starts at 0; and the store's
/// `ChangeLogMemory` tells whether any entry can be due for trimming before the log is read.
final class ChangeLogAppender {
    let logName: String
    /// This log's slot in the store's `ChangeLogMemory`, shared by every transaction.
    private let memory: ChangeLogMemory.Slot
    // No runtime exclusivity checks (see `DatastoreTrees`): one thread at a time, no overlapping access.
    @exclusivity(unchecked) private var tree: Tree?
    @exclusivity(unchecked) private var nextSequence: UInt32?

    /// `memory`: the store's, shared by every transaction.
    init(logName: String, memory: ChangeLogMemory) {
        self.logName = logName
        self.memory = memory.slot(for: logName)
    }

    /// Makes the next append look up its position in the log again (after a rollback).
    func forgetPosition() {
        nextSequence = nil
    }

    func append(_ kind: UInt8, idBytes: [UInt8], in context: StoreWriteContext) throws {
        let write = context.write
        let log: Tree
        if let tree, write.isOpen(tree) { log = tree } else {
            log = try context.writableTree(logName)
            tree = log
        }
        let sequence: UInt32
        if let nextSequence {
            sequence = nextSequence
        } else if try write.record(of: log).lastModified != write.transactionID {
            // Unchanged by this transaction: no entry of this generation, and the log read by the
            // trim is the committed one, whose oldest entry the memory may keep.
            sequence = 0
            if let oldest = try trim(log, write: write) { memory.remember(oldestGeneration: oldest) }
        } else {
            sequence = try Self.firstFreeSequence(in: log, write: write)
            if sequence == 0 { _ = try trim(log, write: write) }
        }
        guard sequence < .max else { throw StrataError.misuse("more than \(UInt32.max - 1) changes to '\(logName)' in one commit") }
        nextSequence = sequence + 1
        // The value, `kind ++ identifier`, is built on the stack (not generic: a value built through
        // a generic helper paid runtime metadata lookups; one in a reused array paid its emptying
        // and uniqueness checks, ~200 instructions an append).
        try withUnsafeTemporaryAllocation(byteCount: idBytes.count + 1, alignment: 1) { value in
            value[0] = kind
            idBytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: value[1...]).copyMemory(from: $0) }
            try write.put(ChangeLogKey(generation: write.transactionID, sequence: sequence), UnsafeRawBufferPointer(value), in: log)
        }
    }

    /// One past the last sequence number this commit used in `log`, or 0 if it used none.
    private static func firstFreeSequence(in log: Tree, write: WriteTransaction) throws -> UInt32 {
        let cursor = try write.cursor(log)
        guard try cursor.seekLast(atOrBefore: ChangeLogKey(generation: write.transactionID, sequence: .max)) else { return 0 }
        guard let last = try cursor.key().withUnsafeBytes({ ChangeLogKey(parsing: $0) }),
              last.generation == write.transactionID else { return 0 }
        return last.sequence &+ 1
    }

    /// Old entries go at the first change of each commit (see `ChangeLogTrimming`). Returns the
    /// oldest generation the log held, if it was read.
    private func trim(_ log: Tree, write: WriteTransaction) throws -> UInt64? {
        try ChangeLogTrimming.trim(log, in: write, oldestAtLeast: memory.oldestGeneration) { length in
            DatastoreError.corruptLogEntry(datastore: logName, generation: write.transactionID, reason: "a log key of \(length) bytes")
        }
    }
}

/// Appending to a datastore's change log (`<name>#log`, see `DatastoreLayout`), which observers in
/// any process read. Not generic: the log holds identifier bytes only, so whole-datastore
/// operations that know no format (`Store.clear()`) log through the same code.
extension StoreWriteContext {
    /// The appender of the log tree `logName` in this context (one per log, shared by every
    /// writer of the context). Names are matched by their bytes (`TreeName`): two logs whose
    /// names are only canonically equivalent are two trees.
    func changeLog(_ logName: String) -> ChangeLogAppender {
        if let appender = changeLogs.first(where: { TreeName.same($0.logName, logName) }) { return appender }
        let appender = ChangeLogAppender(logName: logName, memory: changeLogMemory)
        changeLogs.append(appender)
        return appender
    }

    /// Appends `(generation, sequence) -> kind ++ idBytes` to the log tree `logName`.
    func appendChange(_ kind: UInt8, idBytes: [UInt8], toLog logName: String) throws {
        try changeLog(logName).append(kind, idBytes: idBytes, in: self)
    }
}
