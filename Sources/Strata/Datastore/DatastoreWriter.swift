import StrataCore

/// Reads and writes of one datastore inside the store's write transaction (`tx[datastore]`).
///
/// Every write keeps all declared indexes exact and appends to the datastore's change log (which
/// observers in any process read). Checks that can fail (unique indexes, insert) run before any
/// entry is written, so a refused write changes no entry. (Reading the previous version copies
/// the primary tree's path for the put, so a transaction whose only write was refused still
/// commits a generation, with no changed entry and no change-log entry.)
public final class DatastoreWriter<F: DatastoreFormat>: DatastoreReader<F> {
    let writeContext: StoreWriteContext
    var write: WriteTransaction { writeContext.write }
    /// This datastore's trees in the context, looked up on first use (the context keeps them
    /// for every writer of the datastore; see `DatastoreTrees` for when handles are renewed).
    @exclusivity(unchecked) private var cachedTrees: DatastoreTrees?

    init(writeContext: StoreWriteContext, schema: DatastoreSchema<F>) {
        self.writeContext = writeContext
        super.init(context: writeContext, schema: schema)
    }

    /// Stores `instance` (insert or replace). Returns the instance it replaced, if any.
    @discardableResult
    public func persist(_ instance: F.Instance) throws -> F.Instance? {
        try store(instance, mustBeNew: false)
    }

    /// Stores a new instance; throws `instanceExists` if its identifier is taken.
    public func insert(_ instance: F.Instance) throws {
        _ = try store(instance, mustBeNew: true)
    }

    /// Deletes the instance with `id`; throws `instanceNotFound` if there is none.
    @discardableResult
    public func delete(_ id: F.Identifier) throws -> F.Instance {
        guard let old = try remove(idBytes: id.orderedKeyBytes) else {
            throw DatastoreError.instanceNotFound(datastore: F.name, id: "\(id)")
        }
        return old
    }

    /// Deletes the instance with `id` if it exists; returns it.
    @discardableResult
    public func deleteIfPresent(_ id: F.Identifier) throws -> F.Instance? {
        try remove(idBytes: id.orderedKeyBytes)
    }

    /// Deletes every instance whose index value lies in `range`; returns how many.
    @discardableResult
    public func delete<I: IndexRepresentation, R: IndexRangeExpression>(_ range: R, from index: KeyPath<F, I>) throws -> Int
    where I.Instance == F.Instance, R.Bound == I.Value {
        let info = try schema.index(index)
        var identifiers: [[UInt8]] = []
        try scan(info.tree, KeyRange(range), order: .ascending, limit: nil) { key, _ in
            identifiers.append(try key.withUnsafeBytes { Array(try Self.identifierBytes(inIndexKey: $0, valueType: I.Value.self, index: info.name)) })
        }
        var removed = 0
        for idBytes in Set(identifiers) where try remove(idBytes: idBytes) != nil { removed += 1 }
        return removed
    }

    private func store(_ instance: F.Instance, mustBeNew: Bool) throws -> F.Instance? {
        let id = F.identifier(of: instance)
        let trees = self.trees
        var buffers = trees.instanceBuffers.take()
        defer { trees.instanceBuffers.give(&buffers) }
        buffers.setIdentifier(id)
        try buffers.setEnvelope(of: instance, format: F.self, currentPrefix: schema.currentEnvelopePrefix)
        let idBytes = buffers.id, envelope = buffers.envelope
        let primary = try trees.primary(named: layout.primary, in: writeContext)
        // No `F.Instance?` local: in this unspecialized generic code each one costs a runtime
        // metadata lookup per write. The previous version is looked up along the path the put
        // below takes (one descent for both); it is decoded before that put replaces it.
        guard let oldEnvelope = try write.valueForReplacing(idBytes, in: primary) else {
            try store(instance, envelope: envelope, idBytes: idBytes, replacing: instance, isNew: true, primary: primary, trees: trees)
            return nil
        }
        if mustBeNew { throw DatastoreError.instanceExists(datastore: F.name, id: "\(id)") }
        // Decoding the old instance also refuses to overwrite data written by a newer version.
        // `oldEnvelope` points into a page of this transaction: the decode (the user's
        // `init(from:)`) must not write to the store.
        let old = try decode(oldEnvelope, id: idBytes)
        try store(instance, envelope: envelope, idBytes: idBytes, replacing: old, isNew: false, primary: primary, trees: trees)
        return old
    }

    /// Writes `instance` (encoded as `envelope`) and its index entries and log entry; `old` is the
    /// instance it replaces unless `isNew` (then it is `instance` itself and is not read).
    private func store(_ instance: F.Instance, envelope: [UInt8], idBytes: [UInt8], replacing old: F.Instance, isNew: Bool,
                       primary: Tree, trees: DatastoreTrees) throws {
        var scratch = trees.scratch.take()
        defer { trees.scratch.give(&scratch) }
        try collectIndexChanges(of: instance, replacing: old, isNew: isNew, idBytes: idBytes, trees: trees, into: &scratch)

        try write.put(idBytes, envelope, in: primary)
        if !scratch.entries.isEmpty {
            try scratch.keys.withUnsafeBytes { keys in
                for entry in scratch.entries {
                    let key = UnsafeRawBufferPointer(rebasing: keys[entry.keyStart..<entry.keyEnd])
                    let tree = trees.openedIndex(at: entry.indexPosition)
                    if entry.isRemoval {
                        try write.delete(key, in: tree)
                    } else {
                        try write.put(key, entry.isDirect ? envelope : [], in: tree)
                    }
                }
            }
        }
        try trees.log.append((isNew ? ChangeLogKind.created : .updated).rawValue, idBytes: idBytes, in: writeContext)
        try recordShape(of: instance)
    }

    /// The index entries that change when `instance` is stored in place of `old` (`old` is ignored
    /// when `isNew`), after
    /// checking the unique indexes (no entry is written here, so a refused write changes none).
    /// An index whose values did not change is left out, its tree not even opened: an update
    /// that keeps a book's title and isbn touches neither index.
    private func collectIndexChanges(of instance: F.Instance, replacing old: F.Instance, isNew: Bool, idBytes: [UInt8],
                                     trees: DatastoreTrees, into scratch: inout WriteScratch) throws {
        let targets = schema.writeTargets
        for position in 0..<targets.count {
            let target = targets[position]
            let definition = Self.definition(of: target)
            if isNew, let appendValue = definition.appendSingleValue {
                // A new instance's one value per index is written straight into the reused key
                // buffer, with no array of its own; nothing is removed, the value is checked.
                let tree = try trees.index(at: position, named: target.tree, in: writeContext)
                guard let value = scratch.appendValue({ appendValue(instance, &$0) }) else {
                    throw StrataError.misuse("the encodeOrderedKey(into:) of \(definition.valueType) (index '\(target.name)' of '\(F.name)') removed bytes it had not written; it must only append to the writer")
                }
                if target.isUnique, try scratch.keys.withUnsafeBytes({
                    try isTaken(UnsafeRawBufferPointer(rebasing: $0[value]), byOtherThan: idBytes, in: tree)
                }) {
                    throw DatastoreError.uniqueIndexViolation(datastore: F.name, index: target.name,
                                                              value: definition.describe(Array(scratch.keys[value])))
                }
                scratch.appendAddition(ofValueAt: value, idBytes, position: position, isDirect: target.isDirect)
                continue
            }
            let diff: IndexValueDiff?
            if let single = definition.singleValue {
                if !isNew, let same = definition.sameSingleValue, same(instance, old) {
                    // Unchanged (`==` values encode alike): nothing to encode unless the entry is rewritten.
                    guard target.isDirect else { continue }
                    diff = .rewrite(single(instance))
                } else {
                    diff = .single(single(instance), replacing: isNew ? nil : single(old), isDirect: target.isDirect)
                }
            } else {
                diff = .many(definition.encodedValues(of: instance), replacing: isNew ? nil : definition.encodedValues(of: old), isDirect: target.isDirect)
            }
            guard let change = diff else { continue }
            let tree = try trees.index(at: position, named: target.tree, in: writeContext)
            if target.isUnique {
                try change.checked.forEach { value in
                    if try isTaken(value, byOtherThan: idBytes, in: tree) {
                        throw DatastoreError.uniqueIndexViolation(datastore: F.name, index: target.name, value: definition.describe(value))
                    }
                }
            }
            scratch.record(change, ofIndexAt: position, isDirect: target.isDirect, idBytes: idBytes)
        }
    }

    /// The definition of an index of this datastore. No checked cast (which would look up the
    /// generic metadata this type exists to avoid): the schema built the target from its own
    /// `IndexDefinition<F.Instance>`.
    @inline(__always)
    private static func definition(of target: IndexWriteTarget) -> IndexDefinition<F.Instance> {
        unsafeDowncast(target.definition, to: IndexDefinition<F.Instance>.self)
    }

    /// This datastore's trees in the write context.
    private var trees: DatastoreTrees {
        if let cachedTrees { return cachedTrees }
        let trees = writeContext.trees(of: schema)
        cachedTrees = trees
        return trees
    }

    private func remove(idBytes: [UInt8]) throws -> F.Instance? {
        guard let primary = try context.tree(layout.primary), let envelope = try write.get(idBytes, in: primary) else { return nil }
        let old = try decode(envelope, id: idBytes)
        try write.delete(idBytes, in: primary)
        for target in schema.writeTargets {
            guard let tree = try context.tree(target.tree) else { continue }
            for value in Self.definition(of: target).encodedValues(of: old) { try write.delete(value + idBytes, in: tree) }
        }
        try appendLog(.deleted, idBytes: idBytes)
        return old
    }

    /// Whether a unique index entry for `value` belongs to an identifier other than `idBytes`.
    /// Entries of one value are the keys with its bytes as prefix, so the first such key is the
    /// only candidate (found without a descent when the last insert into the index went into its
    /// leaf, see `WriteTransaction.withFirstKey(startingWith:in:_:)`).
    private func isTaken(_ value: [UInt8], byOtherThan idBytes: [UInt8], in tree: Tree) throws -> Bool {
        try value.withUnsafeBytes { try isTaken($0, byOtherThan: idBytes, in: tree) }
    }

    private func isTaken(_ value: UnsafeRawBufferPointer, byOtherThan idBytes: [UInt8], in tree: Tree) throws -> Bool {
        try write.withFirstKey(startingWith: value, in: tree) { key in
            guard let key else { return false }
            return !UnsafeRawBufferPointer(rebasing: key[value.count...]).elementsEqual(idBytes)
        }
    }

    // MARK: Change log

    func appendLog(_ kind: ChangeLogKind, idBytes: [UInt8]) throws {
        try trees.log.append(kind.rawValue, idBytes: idBytes, in: writeContext)
    }
}
