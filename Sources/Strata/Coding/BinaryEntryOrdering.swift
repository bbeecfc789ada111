/// How the entries of a container must be ordered in the output.
///
/// Determinism requirement: the same value must always produce the same bytes. Structs and
/// arrays already encode in a fixed order, but `Dictionary` and `Set` iterate in a per-process
/// random (hash-seeded) order, so their containers are sorted when they are closed.
enum BinaryEntryOrdering {
    /// Keep the order in which entries were written.
    case asWritten
    /// A dictionary: keyed form sorted by key bytes; unkeyed `[key, value, key, value…]`
    /// form (non-String/Int keys) sorted pairwise by the key's encoded bytes.
    case dictionary
    /// A set: elements sorted by their encoded bytes.
    case set

    static func of<T>(_: T.Type) -> BinaryEntryOrdering {
        // `Dictionary` and `Set` are one-word structs: any other size cannot conform, and is
        // answered without the runtime conformance lookup (a global cache probe that was about
        // 5 % of encoding a flat struct).
        guard MemoryLayout<T>.size == MemoryLayout<[Int: Int]>.size else { return .asWritten }
        return (T.self as? any BinaryUnorderedCollection.Type)?.binaryEntryOrdering ?? .asWritten
    }
}

/// Marks standard collections whose iteration order is not deterministic.
protocol BinaryUnorderedCollection {
    static var binaryEntryOrdering: BinaryEntryOrdering { get }
}

extension Dictionary: BinaryUnorderedCollection {
    static var binaryEntryOrdering: BinaryEntryOrdering { .dictionary }
}

extension Set: BinaryUnorderedCollection {
    static var binaryEntryOrdering: BinaryEntryOrdering { .set }
}

/// Sorts the entries of a finished container in place.
///
/// The region holds entries this encoder just wrote, so it is well formed; the parsing below
/// still goes through the bounds-checked varint reader.
enum BinaryEntrySorter {
    /// Keyed entries: `[key length][key][value length][value]`, sorted by key bytes.
    static func sortKeyedEntries(_ bytes: inout BinaryOutputBuffer, region: Range<Int>, count: Int) {
        reorder(&bytes, region: region, entriesPerGroup: 2, count: count * 2) { group, buffer in
            // The sort key of a field is its key's UTF-8 (without the length prefix), so the
            // order is plain string byte order.
            var offset = group.lowerBound
            let length = (try? BinaryVarint.readLength(from: buffer, at: &offset, of: "key")) ?? 0
            return offset..<(offset + length)
        }
    }

    /// Unkeyed entries: `[length][value]` each. Sets sort single elements; dictionaries sort
    /// `[key][value]` pairs by the key element.
    static func sortUnkeyedEntries(_ bytes: inout BinaryOutputBuffer, region: Range<Int>, count: Int, pairs: Bool) {
        reorder(&bytes, region: region, entriesPerGroup: pairs ? 2 : 1, count: count) { group, buffer in
            var offset = group.lowerBound
            let length = (try? BinaryVarint.readLength(from: buffer, at: &offset, of: "element")) ?? 0
            return offset..<(offset + length)
        }
    }

    /// Splits `region` into `count` length-prefixed items, groups them, sorts groups by the
    /// bytes `sortBytes` selects (ties broken by the whole group, so the result is total),
    /// and writes the groups back in order.
    private static func reorder(
        _ bytes: inout BinaryOutputBuffer, region: Range<Int>, entriesPerGroup: Int, count: Int,
        sortBytes: (Range<Int>, UnsafeRawBufferPointer) -> Range<Int>
    ) {
        guard count > entriesPerGroup, count % entriesPerGroup == 0 else { return }
        let sorted: [UInt8]? = bytes.withUnsafeBytes { buffer in
            var groups: [(group: Range<Int>, key: Range<Int>)] = []
            groups.reserveCapacity(count / entriesPerGroup)
            var offset = region.lowerBound
            for _ in 0..<(count / entriesPerGroup) {
                let start = offset
                for _ in 0..<entriesPerGroup {
                    guard let length = try? BinaryVarint.readLength(from: buffer, at: &offset, of: "entry"),
                          offset + length <= region.upperBound else { return nil }
                    offset += length
                }
                groups.append((start..<offset, sortBytes(start..<offset, buffer)))
            }
            groups.sort { lhs, rhs in
                let left = buffer[lhs.key], right = buffer[rhs.key]
                if left.elementsEqual(right) {
                    return buffer[lhs.group].lexicographicallyPrecedes(buffer[rhs.group])
                }
                return left.lexicographicallyPrecedes(right)
            }
            var output: [UInt8] = []
            output.reserveCapacity(region.count)
            for entry in groups { output.append(contentsOf: buffer[entry.group]) }
            return output
        }
        if let sorted, sorted.count == region.count {
            bytes.overwrite(at: region.lowerBound, with: sorted)
        }
    }
}
