import Glibc

/// Tree names compared as the catalog keys them: by their UTF-8 bytes.
///
/// Swift's `==` calls canonically equivalent strings equal ("\u{212B}", ANGSTROM SIGN, and
/// "A\u{30A}", A with a combining ring), while the catalog, keyed by bytes, holds them as two
/// trees. Invariant: every cache or list that finds a tree by name (a transaction's open trees,
/// a generation's cached catalog entries, the writer's memory of the catalog) compares names with
/// `TreeName.same`; one that used `==` would hand one tree's state out for the other's.
enum TreeName {
    /// Whether `a` and `b` are the same catalog key (the same UTF-8 bytes). Cheap in both usual
    /// cases: the caller passes the very string it passed before (identical representations are
    /// the same string), or a name of another length (a datastore's primary tree passed on the way
    /// to its index trees).
    @inline(__always)
    static func same(_ a: String, _ b: String) -> Bool {
        unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
            || (a.utf8.count == b.utf8.count && sameBytes(a, b))
    }

    @inline(never)
    private static func sameBytes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) }
        }
    }
}
