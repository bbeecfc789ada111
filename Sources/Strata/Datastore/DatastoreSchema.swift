import Foundation
import StrataCore
import Synchronization

/// Everything a datastore knows about its format, shared by the datastore and the transaction
/// contexts that use it: tree layout, resolved indexes, and which indexes are not built yet.
@usableFromInline final class DatastoreSchema<F: DatastoreFormat>: Sendable {
    let format: F
    let layout: DatastoreLayout
    let indexes: [IndexInfo<F.Instance>]
    /// How envelopes written by this version start (`InstanceEnvelope.currentPrefix`).
    let currentEnvelopePrefix: [UInt8]
    /// `currentEnvelopePrefix`, compared by words on every decode.
    let currentEnvelopeMatcher: EnvelopePrefixMatcher
    /// Whether an envelope starting with `currentEnvelopePrefix` is decoded by the binary decoder
    /// alone (binary coding, no field evolution), decided once instead of per instance.
    let decodesBinaryDirectly: Bool
    /// Whether `F.Instance` is a type the binary coder stores in a special form (a bare `UUID`,
    /// `Date` or `Data`), decided once for `BinaryInstanceDecoder.decodeInstance`.
    let instanceIsSpecialValue: Bool
    /// `indexes` without their definitions, position for position (see `readTarget(_:)`), in
    /// storage of the schema's own, which lives as long as the schema and never moves: a query
    /// borrows its target through a pointer instead of copying it out of an array (a retain and a
    /// release, atomic, of each of its two names per query). Only read after `init`.
    private nonisolated(unsafe) let readTargets: UnsafeMutableBufferPointer<IndexReadTarget>
    /// `indexes` as the write path reads them, position for position (see `IndexWriteTarget`).
    let writeTargets: [IndexWriteTarget]
    /// Declared indexes whose stored entries do not match the declaration (new or changed).
    /// Private: it changes only through `setStaleIndexes(_:)`, which keeps `hasStaleIndexes` in
    /// step (a change that left the flag false would let queries read an unbuilt index).
    private let staleIndexes: Mutex<Set<String>>
    /// The names of the declared indexes that need building (see `staleIndexes`).
    var staleIndexNames: Set<String> { staleIndexes.withLock { $0 } }
    /// Whether `staleIndexes` is not empty: a query by index checks this plain flag instead of
    /// taking the lock (the usual case: every index built).
    private let hasStaleIndexes = Atomic<Bool>(false)
    /// Key paths resolved so far and their positions in `indexes`: a repeated query costs a few
    /// identity compares instead of a key-path projection and a search (see `IndexKeyPathTable`).
    private let resolvedKeyPaths = IndexKeyPathTable()

    /// Indexes of an earlier declaration that no longer exists, whose trees are to be dropped:
    /// each name once by its bytes (an index whose name changed only in normalization is one).
    let droppedIndexes: Mutex<[String]>
    /// Writes left in this process whose instance shapes are recorded (see `InstanceShape`).
    let shapeSamplesLeft = Atomic<Int>(16)

    /// `name`: where the datastore's trees are (`F.name`, or a former name a reader finds them under).
    init(name: String = F.name) {
        format = F()
        layout = DatastoreLayout(name: name)
        indexes = IndexDiscovery.indexes(of: format, layout: layout)
        currentEnvelopePrefix = InstanceEnvelope.currentPrefix(format: F.self)
        currentEnvelopeMatcher = EnvelopePrefixMatcher(currentEnvelopePrefix)
        decodesBinaryDirectly = F.coding == .binary && F.fieldEvolution == nil
        instanceIsSpecialValue = BinarySpecialValues.isSpecial(F.Instance.self)
        readTargets = .allocate(capacity: indexes.count)
        _ = readTargets.initialize(from: indexes.map { IndexReadTarget(name: $0.name, tree: $0.tree, isDirect: $0.isDirect) })
        writeTargets = indexes.map(IndexWriteTarget.init)
        staleIndexes = Mutex([])
        droppedIndexes = Mutex([])
    }

    deinit {
        readTargets.deinitialize()
        readTargets.deallocate()
    }

    var descriptor: DatastoreDescriptor {
        DatastoreDescriptor(version: "\(F.currentVersion.rawValue)", indexes: indexes.map(\.descriptor))
    }

    /// The declared index a format key path names; reading a stale one is an error.
    func index<I: IndexRepresentation>(_ keyPath: KeyPath<F, I>, forReading: Bool = true) throws -> IndexInfo<F.Instance>
    where I.Instance == F.Instance {
        indexes[try position(of: keyPath, forReading: forReading)]
    }

    /// Where a unique-index load reads the index a format key path names (as `index(_:)`, but
    /// without `IndexInfo<F.Instance>`, whose generic metadata unspecialized code looks up per use).
    /// Valid as long as this schema: the caller holds the schema while it reads through it.
    func readTarget<I: IndexRepresentation>(_ keyPath: KeyPath<F, I>) throws -> UnsafePointer<IndexReadTarget> where I.Instance == F.Instance {
        UnsafePointer(readTargets.baseAddress! + (try position(of: keyPath, forReading: true)))
    }

    /// The position in `indexes` of the index a format key path names; reading a stale one is an error.
    private func position<I: IndexRepresentation>(of keyPath: KeyPath<F, I>, forReading: Bool) throws -> Int where I.Instance == F.Instance {
        let position: Int
        if let cached = resolvedKeyPaths.position(of: keyPath) {
            position = cached
        } else {
            let definition = format[keyPath: keyPath].definition
            guard let found = indexes.firstIndex(where: { $0.definition === definition }) else {
                throw DatastoreError.unknownIndex(datastore: F.name, index: "\(keyPath)")
            }
            position = found
            resolvedKeyPaths.remember(keyPath, position: found)
        }
        if forReading, hasStaleIndexes.load(ordering: .acquiring), staleIndexes.withLock({ $0.contains(readTargets[position].name) }) {
            throw DatastoreError.indexNotBuilt(datastore: F.name, index: readTargets[position].name)
        }
        return position
    }

    /// Decodes a stored envelope of this datastore (migrating older versions).
    func decode(_ envelope: ByteView) throws -> F.Instance {
        // The view's bytes stay valid while `envelope` does, which `extendLifetime` keeps alive
        // past their last use. No closure: in this unspecialized class `withUnsafeBytes` and its
        // closure are not inlined (67 instructions more per typed load, callgrind).
        defer { extendLifetime(envelope) }
        return try decode(bytes: envelope.unsafeBytesWhileAlive)
    }

    /// `decode(_:)` of an envelope lent in place (valid during the call). Inlined into
    /// `decode(_:)`, so a load by identifier pays no call more.
    @inline(__always)
    func decode(bytes: UnsafeRawBufferPointer) throws -> F.Instance {
        // The usual envelope (current version, binary, no field evolution) goes straight to the
        // decoder: every generic layer in between costs look-ups per instance.
        if decodesBinaryDirectly, let payload = currentEnvelopeMatcher.payload(of: bytes) {
            return try BinaryInstanceDecoder.decodeInstance(F.Instance.self, from: payload, isSpecial: instanceIsSpecialValue)
        }
        return try InstanceEnvelope.decode(bytes, format: F.self, currentPrefix: currentEnvelopeMatcher)
    }

    /// Replaces the set of stale indexes (and the flag queries check first).
    func setStaleIndexes(_ stale: Set<String>) {
        staleIndexes.withLock { current in
            current = stale
            hasStaleIndexes.store(!stale.isEmpty, ordering: .releasing)
        }
    }

    func storedDescriptor(in context: StoreReadContext) throws -> DatastoreDescriptor? {
        try DatastoreDescriptor.stored(in: context, layout: layout)
    }

    /// The declared indexes whose names differ only in Unicode normalization (none in a format
    /// that opens). The store would hold them as two trees, but `==`, the `Set` of
    /// `indexesNeedingBuild` and a reader of error messages call them one index, so a format may
    /// not declare both (`DatastoreError.equivalentIndexNames`).
    func equivalentIndexNames() -> [String] {
        var names: [String] = []
        // `indexes` is sorted by `<`, under which equivalent names are equal: they are neighbours.
        for (first, second) in zip(indexes, indexes.dropFirst()) where first.name == second.name {
            if !names.contains(where: { TreeName.same($0, first.name) }) { names.append(first.name) }
            names.append(second.name)
        }
        return names
    }

    /// Compares the stored declaration with the format's and records what must be rebuilt and
    /// dropped. Names are matched by their bytes (`TreeName`), as their trees are: a stored index
    /// whose name is only canonically equivalent to a declared one has another tree, so the
    /// declared one is built and the stored one dropped. A stored declaration naming an index
    /// twice (only a forged one does) counts by its first entry.
    func reconcile(with stored: DatastoreDescriptor?, hasData: Bool) {
        let previous = stored?.indexes ?? []
        let stale = hasData ? indexes.filter { declared in
            previous.first { TreeName.same($0.name, declared.name) }?.describesSameIndex(as: declared.descriptor) != true
        } : []
        // Declared names are pairwise not equivalent (`equivalentIndexNames`), so a `Set` keeps them apart.
        setStaleIndexes(Set(stale.map(\.name)))
        var dropped: [String] = []
        for index in previous where !indexes.contains(where: { TreeName.same($0.name, index.name) })
            && !dropped.contains(where: { TreeName.same($0, index.name) }) {
            dropped.append(index.name)
        }
        droppedIndexes.withLock { $0 = dropped }
    }

    func writeDescriptor(in context: StoreWriteContext) throws {
        let info = try context.writableTree(layout.info)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try context.write.put(DatastoreDescriptor.storageKey, Array(try encoder.encode(descriptor)), in: info)
    }
}
