import Foundation
import Glibc
import Strata

/// The property keys a read asked for, encoded once for the whole read, in one buffer: a read
/// walks each entity's header (`RecordHeader`) and decodes only the current entries of these
/// keys, skipping the others without decoding their datestamps or bodies, and stops as soon as
/// it has met them all.
///
/// Why the walk compares a wanted encoding at the entry's start instead of first finding where
/// the entry's key ends: an ordered string's encoding ends with the terminator `00 00`, which
/// never occurs inside one (a zero byte in the payload is `00 FF`), so no encoding is a proper
/// prefix of another, and the bytes of an entry that start with a whole wanted encoding are that
/// key. Only an entry that matches no wanted key has its key skipped byte by byte.
struct WantedKeys {
    /// The distinct keys, in the order first asked for.
    let keys: [String]
    /// Their ordered encodings, one after the other.
    private let encodings: [UInt8]
    /// Where each key's encoding ends in `encodings`.
    private let ends: [Int]
    /// The first eight bytes of each key's encoding (all of it when shorter, zeros after it) as
    /// a little-endian word, and the mask of the bytes it holds: an entry whose next eight bytes
    /// agree with a key's word under its mask starts with that key's first eight bytes (the
    /// whole encoding when it is no longer), found by one load and one compare instead of a call.
    private let heads: [(word: UInt64, mask: UInt64)]

    init(_ requested: [String]) {
        var keys: [String] = []
        var encodings: [UInt8] = []
        var ends: [Int] = []
        keys.reserveCapacity(requested.count)
        ends.reserveCapacity(requested.count)
        for key in requested where !keys.contains(key) {
            keys.append(key)
            encodings.append(contentsOf: EntityLayout.encodedName(key))
            ends.append(encodings.count)
        }
        self.keys = keys
        self.encodings = encodings
        self.ends = ends
        heads = ends.indices.map { index in
            let start = index == 0 ? 0 : ends[index - 1]
            var word: UInt64 = 0, mask: UInt64 = 0
            for byte in 0..<min(8, ends[index] - start) {
                word |= UInt64(encodings[start + byte]) << (8 * UInt64(byte))
                mask |= 0xFF << (8 * UInt64(byte))
            }
            return (word, mask)
        }
    }

    var count: Int { keys.count }

    /// The encoding of key number `index`.
    func encoding(_ index: Int) -> ArraySlice<UInt8> { encodings[(index == 0 ? 0 : ends[index - 1])..<ends[index]] }

    /// The number of the key whose encoding is `encoding`, or nil when it was not asked for.
    func index(ofEncoding encoding: [UInt8]) -> Int? {
        keys.indices.first { self.encoding($0).elementsEqual(encoding) }
    }

    /// Shows the current entry of each wanted key that the stored current-entries section
    /// `entries` holds (see `RecordHeader`) to `found`: the key's number here, the entry's 16
    /// bytes of datestamp and sequence, and its body (nil when only the history holds it). Stops
    /// after the last wanted key is met. Every offset is checked against the section's length.
    /// The walk trusts the section's key order: a key listed twice (only a foreign or damaged
    /// header has one) gives its first entry here, while reads of whole records, `init` and
    /// every write throw `corrupt` for it. Checking the order here cost 180 instructions per
    /// keyed read of the entities benchmark (7,547 -> 7,727, +2.4%), so it is left to those.
    /// - Throws: `EntityError.corrupt` for a malformed section.
    func visit(in entries: UnsafeRawBufferPointer,
               _ found: (_ key: Int, _ stamp: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer?) throws -> Void) throws {
        try withWalker { try $0.visit(in: entries, found) }
    }

    /// Calls `body` with a `Walker` over these keys, valid during the call only: a read lends
    /// the buffers once for all its records (each `visit` lent and retained all of them).
    func withWalker<Result>(_ body: (Walker) throws -> Result) rethrows -> Result {
        try encodings.withUnsafeBytes { wanted in
            try ends.withUnsafeBufferPointer { ends in
                try heads.withUnsafeBufferPointer { heads in try body(Walker(wanted: wanted, ends: ends, heads: heads)) }
            }
        }
    }

    /// The walk of `visit` over buffers lent by `withWalker`.
    struct Walker {
        let wanted: UnsafeRawBufferPointer
        let ends: UnsafeBufferPointer<Int>
        let heads: UnsafeBufferPointer<(word: UInt64, mask: UInt64)>

        /// The encoding of key number `index`.
        func encoding(_ index: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: wanted[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
        }

        /// `WantedKeys.visit`.
        func visit(in entries: UnsafeRawBufferPointer,
                   _ found: (_ key: Int, _ stamp: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer?) throws -> Void) throws {
            guard !ends.isEmpty, entries.baseAddress != nil else { return }
            var remaining = ends.count
            // Bit i set: key i was met and is not compared again; keys beyond the 64th are
            // tracked in `metBeyond` (on the stack; empty for most reads: an empty array here
            // was made unique, a heap allocation, on every walk). A key is counted once even
            // if a damaged header repeats it, so no wanted key is skipped.
            var met: UInt64 = 0
            try withUnsafeTemporaryAllocation(of: Bool.self, capacity: max(0, ends.count - 64)) { metBeyond in
                metBeyond.initialize(repeating: false)
                var offset = 0
                let total = entries.count
                let base = entries.baseAddress!
                while offset < total {
                    // Which wanted key, if any, this entry's key is.
                    var matched = -1
                    var start = 0
                    // An entry is always followed by at least 17 bytes (stamp and mark), so
                    // this holds for every entry of a well-formed section.
                    let wordFits = total - offset >= 8
                    let word = wordFits ? UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) : 0
                    for index in 0..<ends.count {
                        let end = ends[index]
                        defer { start = end }
                        if index < 64 ? met & (1 << UInt64(index)) != 0 : metBeyond[index - 64] { continue }
                        let length = end - start
                        let equal: Bool
                        if wordFits {
                            // The first eight bytes by one compare (the whole key when no
                            // longer), then the rest, if any, with `memcmp`.
                            let head = heads[index]
                            equal = word & head.mask == head.word
                                && (length <= 8 || (length <= total - offset && memcmp(base + offset + 8, wanted.baseAddress! + start + 8, length - 8) == 0))
                        } else {
                            equal = length <= total - offset && memcmp(base + offset, wanted.baseAddress! + start, length) == 0
                        }
                        if equal {
                            matched = index
                            offset += length
                            break
                        }
                    }
                    if matched < 0 { offset = try WantedKeys.endOfName(entries, from: offset) }
                    let (stamp, body) = try WantedKeys.entryRest(entries, at: &offset)
                    guard matched >= 0 else { continue }
                    try found(matched, stamp, body)
                    if matched < 64 { met |= 1 << UInt64(matched) } else { metBeyond[matched - 64] = true }
                    remaining -= 1
                    if remaining == 0 { return }
                }
            }
        }
    }

    /// The rest of the current entry whose key ends at `offset`: its 16 bytes of datestamp and
    /// sequence and its body (nil when only the history holds it); `offset` moves past it.
    /// - Throws: `EntityError.corrupt` when the entry is cut short or malformed.
    @inline(__always)
    static func entryRest(_ entries: UnsafeRawBufferPointer, at offset: inout Int) throws -> (stamp: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer?) {
        let total = entries.count
        guard total - offset >= 17 else { throw EntityError.corrupt(reason: "header entry cut short at byte \(offset)") }
        let stamp = UnsafeRawBufferPointer(rebasing: entries[offset..<(offset + 16)])
        offset += 16
        let mark = entries[offset]
        offset += 1
        switch mark {
        case RecordHeader.inlineMark:
            guard total - offset >= 4 else { throw EntityError.corrupt(reason: "header entry length cut short at byte \(offset)") }
            let length = Int(UInt32(bigEndian: entries.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            offset += 4
            guard length <= total - offset else { throw EntityError.corrupt(reason: "header entry of \(length) bytes, \(total - offset) left") }
            let body = UnsafeRawBufferPointer(rebasing: entries[offset..<(offset + length)])
            offset += length
            return (stamp, body)
        case RecordHeader.historyMark:
            return (stamp, nil)
        default:
            throw EntityError.corrupt(reason: "header entry storage \(mark)")
        }
    }

    /// The 16 bytes of datestamp and sequence and the body of the current entry of the key
    /// encoded as `name` in a stored current-entries section, or nil when it has none: the
    /// walk of `visit` for one key, stopping at it.
    static func entry(named name: UnsafeRawBufferPointer, in entries: UnsafeRawBufferPointer) throws -> (stamp: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer?)? {
        var offset = 0
        let total = entries.count
        while offset < total {
            let matched = name.count <= total - offset && memcmp(entries.baseAddress! + offset, name.baseAddress!, name.count) == 0
            offset = matched ? offset + name.count : try endOfName(entries, from: offset)
            let rest = try entryRest(entries, at: &offset)
            if matched { return rest }
        }
        return nil
    }

    /// The offset just past the ordered string that starts at `start` (its `00 00` terminator;
    /// `00 FF` is an escaped zero inside it): a property key, or what `reading` names.
    /// - Throws: `EntityError.corrupt` for a missing terminator or another byte after a zero.
    static func endOfName(_ bytes: UnsafeRawBufferPointer, from start: Int, reading: StaticString = "property key") throws -> Int {
        var index = start
        let total = bytes.count
        // Eight bytes at a time while they are there: the lowest byte the zero-byte test flags
        // is the first zero byte (a false flag can only sit above a true one).
        while total - index >= 8 {
            let word = UInt64(littleEndian: bytes.baseAddress!.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            let zeros = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
            if zeros == 0 {
                index += 8
                continue
            }
            let zero = index + zeros.trailingZeroBitCount >> 3
            guard zero + 1 < total else { break }
            switch bytes[zero + 1] {
            case 0x00: return zero + 2
            case 0xFF: index = zero + 2
            case let next: throw EntityError.corrupt(reason: "\(reading) with 0x00 followed by \(next)")
            }
        }
        while index + 1 < total {
            if bytes[index] != 0 {
                index += 1
                continue
            }
            switch bytes[index + 1] {
            case 0x00: return index + 2
            case 0xFF: index += 2
            case let next: throw EntityError.corrupt(reason: "\(reading) with 0x00 followed by \(next)")
            }
        }
        throw EntityError.corrupt(reason: "\(reading) without its terminator")
    }
}
