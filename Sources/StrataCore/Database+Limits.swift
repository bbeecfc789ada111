extension Database {
    /// The largest key, in bytes, a tree of this store accepts (it depends on the page size); a
    /// larger one throws `StrataError.keyTooLarge`. Layers that build composite keys check their
    /// parts against it before they write anything.
    public var maximumKeySize: Int { PageLayout.maximumKeySize(pageSize: pageSize) }
}
