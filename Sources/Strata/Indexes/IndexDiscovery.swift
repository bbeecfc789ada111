/// Finding a format's indexes by reflection.
enum IndexDiscovery {
    /// Finds the indexes a format declares: its stored properties holding index representations
    /// (a `@Direct` wrapper's storage is named `_name`; the index is called `name`).
    static func indexes<F: DatastoreFormat>(of format: F, layout: DatastoreLayout) -> [IndexInfo<F.Instance>] {
        var found: [IndexInfo<F.Instance>] = []
        for child in Mirror(reflecting: format).children {
            guard var name = child.label else { continue }
            var value = child.value
            var isDirect = false
            if let marker = value as? DirectIndexMarker {
                value = marker.markedIndex
                isDirect = true
                if name.hasPrefix("_") { name.removeFirst() }
            }
            guard let index = value as? any IndexRepresentation<F.Instance> else { continue }
            found.append(IndexInfo(name: name, tree: layout.index(name), definition: index.definition, isDirect: isDirect))
        }
        return found.sorted { $0.name < $1.name }
    }
}
