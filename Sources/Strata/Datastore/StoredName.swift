/// Datastore and tree names compared as the engine's catalog keys them: by their UTF-8 bytes.
///
/// Swift's `==` and `hasPrefix` call canonically equivalent strings equal ("\u{212B}", ANGSTROM
/// SIGN, and "A\u{30A}", A with a combining ring), while the catalog holds them as two trees, so
/// two datastores whose names differ only in normalization are two datastores. Invariant: code
/// that decides whether a tree or a change log belongs to a datastore (a list of appenders, the
/// memory of logs, the trees a datastore owns) compares names with these, never with `==`; one
/// that did would write one datastore's changes into the other's log, or drop its trees.
enum StoredName {
    /// Whether `a` and `b` name the same tree (the same UTF-8 bytes).
    @inline(__always)
    static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
    }

    /// Whether the bytes of `name` start with those of `prefix`.
    static func name(_ name: String, startsWith prefix: String) -> Bool {
        name.utf8.starts(with: prefix.utf8)
    }
}
