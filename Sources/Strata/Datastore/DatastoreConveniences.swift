import Foundation
import StrataCore

// The everyday conveniences of simple stores: identifiers without decoding, counts, deleting
// everything, generated identifiers; and, on `Store`, the datastores as a whole.

extension DatastoreReader {
    /// Every identifier, in identifier order (or descending), without decoding any instance.
    public func identifiers(order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Identifier] {
        try identifiers(in: .everything, order: order, limit: limit)
    }

    /// The identifiers in `range` (`a..<b`, `a...`, `IndexRange`, …), without decoding any instance.
    public func identifiers<R: IndexRangeExpression>(_ range: R, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Identifier]
    where R.Bound == F.Identifier {
        try identifiers(in: KeyRange(range), order: order, limit: limit)
    }

    func identifiers(in range: KeyRange, order: RangeOrder, limit: Int?) throws -> [F.Identifier] {
        var found: [F.Identifier] = []
        try scan(layout.primary, range, order: order, limit: limit) { key, _ in
            found.append(try key.withUnsafeBytes { try F.Identifier(orderedKeyBuffer: $0) })
        }
        return found
    }
}

extension DatastoreWriter {
    /// Deletes every instance (observers see a deletion for each); returns how many there were.
    /// The datastore itself, its declaration and its indexes stay (empty).
    @discardableResult
    public func deleteAll() throws -> Int {
        try writeContext.deleteAllInstances(of: layout.name)
    }

    /// Stores a new instance whose identifier is a freshly generated UUID: `make` builds the
    /// instance around it. Returns the stored instance. Throws `instanceExists` if `make` ignores
    /// the identifier it is given and returns one already taken.
    ///
    /// ```swift
    /// let note = try tx[notes].persist(generatingID: { Note(id: $0, text: "hello") })
    /// ```
    @discardableResult
    public func persist(generatingID make: (UUID) throws -> F.Instance) throws -> F.Instance where F.Identifier == UUID {
        let instance = try make(UUID())
        try insert(instance)
        return instance
    }
}

extension Datastore {
    /// Every identifier in identifier order (or descending), without decoding any instance.
    ///
    /// ```swift
    /// for id in try books.identifiers(limit: 100) { … }
    /// ```
    public func identifiers(order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Identifier] {
        try store.read { try $0[self].identifiers(order: order, limit: limit) }
    }

    /// The identifiers in `range`, in order, without decoding any instance.
    public func identifiers<R: IndexRangeExpression>(_ range: R, order: RangeOrder = .ascending, limit: Int? = nil) throws -> [F.Identifier]
    where R.Bound == F.Identifier {
        try store.read { try $0[self].identifiers(range, order: order, limit: limit) }
    }
}

extension Datastore where Access == ReadWrite {
    /// Deletes every instance in one transaction; returns how many there were. Observers see a
    /// deletion for each; the declaration and the (now empty) indexes stay.
    @discardableResult
    public func deleteAll() throws -> Int {
        try store.write { try $0[self].deleteAll() }
    }

    /// Stores a new instance with a generated UUID identifier (see `DatastoreWriter.persist(generatingID:)`).
    ///
    /// ```swift
    /// let note = try notes.persist(generatingID: { Note(id: $0, text: "hello") })
    /// ```
    @discardableResult
    public func persist(generatingID make: (UUID) throws -> F.Instance) throws -> F.Instance where F.Identifier == UUID {
        try store.write { try $0[self].persist(generatingID: make) }
    }
}

extension Store {
    /// The names of the datastores in this store, in byte order (whether or not this process
    /// opened them).
    public func datastoreNames() throws -> [String] {
        try read { try DatastoreLayout.datastoreNames(in: $0.transaction) }
    }

    /// The number of instances in every datastore of the store together (no decoding).
    public func count() throws -> Int {
        try read { context in
            try DatastoreLayout.datastoreNames(in: context.transaction).reduce(0) { total, name in
                total + (try context.tree(name).map { try context.transaction.count($0) } ?? 0)
            }
        }
    }
}

extension Store where Access == ReadWrite {
    /// Removes the datastore called `name`: its instances, indexes, change log and declaration,
    /// in one transaction. Returns false if there was none. A `Datastore` handle opened before
    /// must not be used afterwards: open the datastore again (which declares it anew).
    @discardableResult
    public func removeDatastore(named name: String) throws -> Bool {
        try write { context in
            let names = try DatastoreLayout(name: name).treeNames(in: context.transaction)
            for treeName in names { try context.write.dropTree(try context.write.tree(treeName)) }
            return !names.isEmpty
        }
    }

    /// Deletes every instance of every datastore in one transaction (observers see a deletion
    /// for each); returns how many there were. Declarations and indexes stay, empty.
    @discardableResult
    public func clear() throws -> Int {
        try write { context in
            try DatastoreLayout.datastoreNames(in: context.transaction).reduce(0) { total, name in
                total + (try context.deleteAllInstances(of: name))
            }
        }
    }
}

extension StoreWriteContext {
    /// Empties the datastore `name` (primary and index trees) and logs a deletion per instance.
    func deleteAllInstances(of name: String) throws -> Int {
        let layout = DatastoreLayout(name: name)
        guard let primary = try tree(layout.primary) else { return 0 }
        var identifiers: [[UInt8]] = []
        try transaction.scan(primary) { key, _ in
            identifiers.append(key.bytes)
            return true
        }
        guard !identifiers.isEmpty else { return 0 }
        for treeName in try layout.treeNames(in: transaction) where !TreeName.same(treeName, layout.log) && !TreeName.same(treeName, layout.info) {
            try write.clear(try write.tree(treeName))
        }
        // One appender for the whole loop: `changeLog(_:)` searches the context's list of logs.
        let log = changeLog(layout.log)
        for idBytes in identifiers { try log.append(ChangeLogKind.deleted.rawValue, idBytes: idBytes, in: self) }
        return identifiers.count
    }
}

extension DatastoreLayout {
    /// The datastores of a store: every one records its declaration in `<name>#info`. Each name
    /// as its trees spell it (`TreeName`): two whose names are only canonically equivalent are two.
    static func datastoreNames(in transaction: Transaction) throws -> [String] {
        let suffix = "#info".utf8
        return try transaction.treeNames().compactMap { name in
            name.utf8.count > suffix.count && name.utf8.suffix(suffix.count).elementsEqual(suffix)
                ? String(decoding: name.utf8.dropLast(suffix.count), as: UTF8.self) : nil
        }
    }

    /// Every tree of this datastore present in the snapshot: primary, log, info and indexes.
    /// Matched by bytes (`TreeName`): a datastore whose name is only canonically equivalent
    /// to this one's is another datastore, whose trees are not this one's.
    func treeNames(in transaction: Transaction) throws -> [String] {
        let indexPrefix = index("")
        return try transaction.treeNames().filter {
            TreeName.same($0, primary) || TreeName.same($0, log) || TreeName.same($0, info)
                || TreeName.name($0, startsWith: indexPrefix)
        }
    }
}
