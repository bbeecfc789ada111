import StrataCore

/// What a change-log entry records happened to its identifier.
enum ChangeLogKind: UInt8 {
    case created = 1, updated = 2, deleted = 3
}

/// A change-log key: the commit's generation (u64 big-endian) then the change's sequence number
/// within it (u32 big-endian), so keys sort by commit, then by order of the changes (and begin
/// with the generation, as `ChangeLogTrimming` needs). This type builds them.
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
}

/// Appending to a datastore's change log (`<name>#log`, see `DatastoreLayout`), which observers in
/// any process read. Not generic: the log holds identifier bytes only, so whole-datastore
/// operations that know no format (`Store.clear()`) log through the same code.
extension StoreWriteContext {
    /// Appends `(generation, sequence) -> kind ++ idBytes` to the log tree `logName`.
    func appendChange(_ kind: UInt8, idBytes: [UInt8], toLog logName: String) throws {
        let log = try writableTree(logName)
        let sequence = logSequence[logName, default: 0]
        if sequence == 0 {
            // Old entries go on the first append of each commit (see `ChangeLogTrimming`).
            try ChangeLogTrimming.trim(log, in: write) { length in
                DatastoreError.corruptLogEntry(datastore: logName, generation: write.transactionID, reason: "a log key of \(length) bytes")
            }
        }
        logSequence[logName] = sequence + 1
        let key = ChangeLogKey(generation: write.transactionID, sequence: sequence).bytes
        var value: [UInt8] = []
        value.reserveCapacity(1 + idBytes.count)
        value.append(kind)
        value.append(contentsOf: idBytes)
        try write.put(key, value, in: log)
    }
}
