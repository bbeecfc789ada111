import StrataCore

/// Taking over a datastore's data under a new name (`DatastoreFormat.formerNames`): every tree of
/// the former name (instances, indexes, change log, declaration) is renamed in one transaction,
/// without copying a page.
enum DatastoreRename {
    /// The name whose trees the datastore of `F` uses in this store. A read-write store renames
    /// a former name's trees to `F.name` first (once); a read-only one reads them where they are.
    /// Throws `RenameError.datastoreNameTaken` when `F.name` and a former name (or two former
    /// names) both hold trees.
    static func resolveName<F: DatastoreFormat>(of format: F.Type, in store: Store<some StoreAccess>) throws -> String {
        // Opening a datastore of a read-write store writes its declaration: inside an async
        // write body that would wait for the writer this task holds.
        if store is Store<ReadWrite> { try WriteScope.refuseNesting(store.database) }
        guard !F.formerNames.isEmpty else { return F.name }
        if let writable = store as? Store<ReadWrite> {
            return try writable.write { context in
                guard let former = try formerNameHoldingData(F.self, in: context.transaction) else { return F.name }
                let current = DatastoreLayout(name: F.name)
                for treeName in try DatastoreLayout(name: former).treeNames(in: context.transaction) {
                    let suffix = TreeName.name(treeName, droppingPrefix: former)
                    try context.write.renameTree(try context.write.tree(treeName), to: current.name + suffix)
                }
                // The name's change log is now the former datastore's, whose oldest entry may be
                // older than anything remembered under the name.
                writable.changeLogMemory.forget(current.log)
                return F.name
            }
        }
        return try store.read { context in try formerNameHoldingData(F.self, in: context.transaction) ?? F.name }
    }

    /// The former name whose trees must be taken over, if any (none when `F.name` has trees).
    /// Names are told apart by their bytes (`TreeName`), as the catalog tells their trees apart:
    /// a former name only canonically equivalent to `F.name` ("A\u{30A}" for "\u{212B}") is
    /// another datastore, taken over like any former name.
    private static func formerNameHoldingData<F: DatastoreFormat>(_ format: F.Type, in transaction: Transaction) throws -> String? {
        let currentHasTrees = try !DatastoreLayout(name: F.name).treeNames(in: transaction).isEmpty
        var found: String?
        for former in F.formerNames where !TreeName.same(former, F.name) {
            guard try !DatastoreLayout(name: former).treeNames(in: transaction).isEmpty else { continue }
            if currentHasTrees || found != nil { throw RenameError.datastoreNameTaken(datastore: F.name, formerName: former) }
            found = former
        }
        return found
    }
}
