/// Reads the property a key path names from an instance, the way an index reads its value on
/// every write.
///
/// Why: `instance[keyPath: path]` goes through the runtime's key-path interpreter
/// (`swift_getAtKeyPath`), about 430 instructions per read, paid for every index of every write
/// and twice more when an update compares old and new values. When the key path names storage
/// inline in a struct's layout (a stored property, or a chain of them), `MemoryLayout.offset(of:)`
/// gives its byte offset, learned once here, and the read becomes a load at that offset.
///
/// Invariant: `offset` is set only if `MemoryLayout<Root>.offset(of: keyPath)` returned it, which
/// the standard library does only for directly addressable inline storage of a `Root` value (never
/// for computed or observed properties, property wrappers or class references; for a struct with
/// a resilient layout it is the offset the runtime computed for this process), so the value there
/// is a `Value` bound in `Root`'s memory. Anything else reads through the key path.
@usableFromInline
struct PropertyReader<Root, Value>: @unchecked Sendable {
    // @unchecked: the key path is `Sendable` (the index declarations require it) and the offset
    // is a plain integer; the generic parameters need not be.
    @usableFromInline let keyPath: KeyPath<Root, Value>
    @usableFromInline let offset: Int?

    @inlinable
    init(_ keyPath: KeyPath<Root, Value> & Sendable) {
        self.keyPath = keyPath
        offset = MemoryLayout<Root>.offset(of: keyPath)
    }

    /// The value of the property in `root` (a copy, as `root[keyPath: keyPath]` gives).
    @inlinable
    func read(_ root: Root) -> Value {
        guard let offset else { return root[keyPath: keyPath] }
        return withUnsafePointer(to: root) { pointer in
            UnsafeRawPointer(pointer).advanced(by: offset).assumingMemoryBound(to: Value.self).pointee
        }
    }
}
