import StrataCore

/// Progress of `warm` and `migrate`.
public enum DatastoreProgress: Sendable, Equatable {
    case evaluating
    case working(current: Int, total: Int)
    case complete(total: Int)
}

extension Datastore where Access == ReadWrite {
    /// Builds indexes that are new or changed since the data was written, drops indexes no longer
    /// declared, and records the format's declaration: one transaction, reported through `progress`.
    public func warm(progress: (DatastoreProgress) -> Void = { _ in }) throws {
        progress(.evaluating)
        let stale = schema.staleIndexNames
        let dropped = schema.droppedIndexes.withLock { $0 }
        var total = 0
        try store.write { context in
            let writer = context[self]
            total = try writer.count
            for name in dropped {
                if let tree = try context.tree(schema.layout.index(name)) { try context.write.dropTree(tree) }
            }
            let rebuilding = schema.indexes.filter { stale.contains($0.name) }
            if !rebuilding.isEmpty {
                for info in rebuilding {
                    try context.write.clear(try context.writableTree(info.tree))
                }
                var current = 0
                var resumeAfter: [UInt8]?
                // Writing invalidates cursors, so read a batch, then index it, then read on.
                while true {
                    var batch: [(id: [UInt8], envelope: [UInt8])] = []
                    try writer.forEachStored(after: resumeAfter) { idBytes, envelope in
                        batch.append((idBytes, envelope.bytes))
                        return batch.count < 1000
                    }
                    guard let last = batch.last else { break }
                    resumeAfter = last.id
                    for (idBytes, envelope) in batch {
                        let instance = try schema.decode(copied: envelope, id: idBytes)
                        for info in rebuilding {
                            let tree = try context.writableTree(info.tree)
                            for value in info.definition.encodedValues(of: instance) {
                                if info.definition.kind.isUnique, let other = try firstKey(withPrefix: value, in: tree, context: context),
                                   Array(other[value.count...]) != idBytes {
                                    throw DatastoreError.uniqueIndexViolation(datastore: F.name, index: info.name, value: info.definition.describe(value))
                                }
                                try context.write.put(value + idBytes, info.isDirect ? envelope : [], in: tree)
                            }
                        }
                        current += 1
                        if current % 1000 == 0 { progress(.working(current: current, total: total)) }
                    }
                }
            }
            try schema.writeDescriptor(in: context)
        }
        schema.setStaleIndexes([])
        schema.droppedIndexes.withLock { $0 = [] }
        progress(.complete(total: total))
    }

    /// Rewrites every instance stored with an older version in the current version (running its
    /// migration), in batches of `batchSize` per transaction. Returns how many were rewritten.
    @discardableResult
    public func migrate(batchSize: Int = 1000, progress: (DatastoreProgress) -> Void = { _ in }) throws -> Int {
        progress(.evaluating)
        let total = try count
        var rewritten = 0
        var examined = 0
        var resumeAfter: [UInt8]?
        while true {
            let (batch, last) = try store.read { context -> ([[UInt8]], [UInt8]?) in
                var outdated: [[UInt8]] = []
                var last: [UInt8]?
                var seen = 0
                let reader = context[self]
                try reader.forEachStored(after: resumeAfter) { idBytes, envelope in
                    let version = try envelope.withUnsafeBytes { try InstanceEnvelope.storedVersion($0, format: F.self) }
                    if version != F.currentVersion.rawValue { outdated.append(idBytes) }
                    last = idBytes
                    seen += 1
                    return seen < batchSize
                }
                return (outdated, last)
            }
            examined += batch.count
            if !batch.isEmpty {
                try store.write { context in
                    let writer = context[self]
                    for idBytes in batch {
                        if let instance = try writer.load(idBytes: idBytes) { try writer.persist(instance) }
                    }
                }
                rewritten += batch.count
            }
            guard let last else { break }
            resumeAfter = last
            progress(.working(current: min(total, examined), total: total))
        }
        progress(.complete(total: total))
        return rewritten
    }

    private func firstKey(withPrefix value: [UInt8], in tree: Tree, context: StoreWriteContext) throws -> [UInt8]? {
        var found: [UInt8]?
        let range = KeyRange.prefixed(value)
        try context.write.scan(tree, from: range.lower, to: range.upper) { key, _ in
            found = key.bytes
            return false
        }
        return found
    }
}

extension DatastoreReader {
    /// Visits stored (identifier, envelope) pairs in identifier order.
    func forEachStored(after start: [UInt8]? = nil, _ body: ([UInt8], ByteView) throws -> Bool) throws {
        guard let primary = try context.tree(layout.primary) else { return }
        // The smallest key greater than `start` is `start` followed by a zero byte.
        let lower = start.map { $0 + [0] }
        try transaction.scan(primary, from: lower) { key, value in try body(key.bytes, value) }
    }

    func forEachStored(_ body: ([UInt8], ByteView) throws -> Void) throws {
        try forEachStored(after: nil) { key, value in
            try body(key, value)
            return true
        }
    }
}
