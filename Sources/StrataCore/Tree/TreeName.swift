import Glibc

/// Tree names compared as the catalog keys them: by their UTF-8 bytes.
///
/// Swift's `==`, `hasPrefix` and `String`-keyed dictionaries and sets call canonically equivalent
/// strings equal ("\u{212B}", ANGSTROM SIGN, and "A\u{30A}", A with a combining ring), while the
/// catalog, keyed by bytes, holds them as two trees. Invariant: every cache, list or table that
/// finds a tree by name — in the engine (a transaction's open trees and list of names, a
/// generation's cached catalog entries, the writer's memory of the catalog, change streams' stamps,
/// a load's trees) and in the layers above it (a datastore's trees, logs and indexes) — compares
/// names with `TreeName.same` or keys them by `TreeName.Key`; one that used `==` would hand one
/// tree's state out for the other's. Package-wide: the typed layer names its trees by the same rule.
package enum TreeName {
    /// Whether `a` and `b` are the same catalog key (the same UTF-8 bytes). Cheap in both usual
    /// cases: the caller passes the very string it passed before (identical representations are
    /// the same string), or a name of another length (a datastore's primary tree passed on the way
    /// to its index trees).
    @inlinable @inline(__always)
    package static func same(_ a: String, _ b: String) -> Bool {
        unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
            || (a.utf8.count == b.utf8.count && sameBytes(a, b))
    }

    @usableFromInline @inline(never)
    package static func sameBytes(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) }
        }
    }

    /// Whether the bytes of `name` start with those of `prefix` (`hasPrefix` compares characters).
    package static func name(_ name: String, startsWith prefix: String) -> Bool {
        name.utf8.starts(with: prefix.utf8)
    }

    /// `name` without its first `prefix.utf8.count` bytes (`dropFirst` drops characters); the
    /// caller checked `name(_:startsWith:)`.
    package static func name(_ name: String, droppingPrefix prefix: String) -> String {
        String(decoding: name.utf8.dropFirst(prefix.utf8.count), as: UTF8.self)
    }

    /// A name as a dictionary or set key, equal to another only if their bytes are.
    package struct Key: Hashable, Sendable, ExpressibleByStringLiteral {
        package let name: String

        package init(_ name: String) { self.name = name }

        package init(stringLiteral name: String) { self.name = name }

        package static func == (a: Key, b: Key) -> Bool { TreeName.same(a.name, b.name) }

        package func hash(into hasher: inout Hasher) {
            var name = name
            name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
    }
}
