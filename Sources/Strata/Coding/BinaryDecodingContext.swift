/// State shared by every decoder and container of one top-level decode call.
///
/// Why it exists: the standard library copies a container value on *every* `decode` call
/// and passes decoders around as existentials. Any reference-counted field in those values
/// turns each field access into atomic retain/release traffic, which measured as the
/// dominant cost of decoding a small struct. So decoders and containers hold only plain
/// values (offsets, raw pointers, an unmanaged reference to this object, a path-node index)
/// and everything that needs managed storage lives here.
///
/// Lifetime invariant: the top-level decode call keeps this object (and the input buffer)
/// alive for its whole duration; decoders and containers must not be used after it returns.
/// That already holds for the raw input buffer, and `Decodable` implementations do not
/// retain decoders or containers.
///
/// Memory layout: a `ManagedBuffer` whose tail holds the first lookup hints, so a typical
/// decode allocates the context, its path storage and its hints in one block.
final class BinaryDecodingContext: ManagedBuffer<BinaryDecodingContext.State, Int> {
    struct State {
        /// The whole top-level input.
        let buffer: UnsafeRawBufferPointer
        /// Coding paths as a parent-linked tree: each nested value adds one node.
        /// Append-only, so a path index stays valid however containers are interleaved.
        var pathNodes: [(parent: Int, key: any CodingKey)] = []
        /// Hints handed out so far from the tail storage.
        var inlineHintsUsed = 0
        /// Further hint storage once the tail is exhausted (deep or wide documents).
        var overflowChunks: [UnsafeMutablePointer<Int>] = []
        var overflowNext: UnsafeMutablePointer<Int>?
        var overflowLeft = 0
    }

    /// Hints (two `Int`s each) stored in the object's own allocation.
    private static let inlineHintCapacity = 8
    private static let hintsPerOverflowChunk = 32

    /// The path index meaning "no key" (the top-level value).
    static let rootPath = -1

    static func make(buffer: UnsafeRawBufferPointer) -> BinaryDecodingContext {
        let object = create(minimumCapacity: 2 * inlineHintCapacity) { _ in State(buffer: buffer) }
        return unsafeDowncast(object, to: BinaryDecodingContext.self)
    }

    deinit {
        withUnsafeMutablePointerToHeader { state in
            for chunk in state.pointee.overflowChunks {
                chunk.deallocate()
            }
        }
    }

    // MARK: Extents

    func bytes(in extent: BinaryExtent) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: header.buffer[Int(extent.start)..<Int(extent.end)])
    }

    /// The extent of `bytes`, which must be a sub-buffer of the input.
    func extent(of bytes: UnsafeRawBufferPointer) -> BinaryExtent {
        guard let base = header.buffer.baseAddress, let start = bytes.baseAddress else {
            return BinaryExtent(start: 0, end: 0)
        }
        let offset = start - base
        return BinaryExtent(start: UInt32(offset), end: UInt32(offset + bytes.count))
    }

    // MARK: Coding paths

    func appendPathNode(parent: Int, key: any CodingKey) -> Int {
        header.pathNodes.append((parent, key))
        return header.pathNodes.count - 1
    }

    func codingPath(at node: Int) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var current = node
        while current >= 0 {
            keys.append(header.pathNodes[current].key)
            current = header.pathNodes[current].parent
        }
        return keys.reversed()
    }

    // MARK: Hints

    /// Storage for one keyed container's lookup hint: `[0]` = index of the next expected
    /// field, `[1]` = its byte offset. The address stays valid while the context lives:
    /// tail storage and overflow chunks never move.
    func makeHint(firstFieldOffset: Int) -> UnsafeMutablePointer<Int> {
        let hint = withUnsafeMutablePointers { state, tail -> UnsafeMutablePointer<Int> in
            if state.pointee.inlineHintsUsed < Self.inlineHintCapacity {
                defer { state.pointee.inlineHintsUsed += 1 }
                return tail + 2 * state.pointee.inlineHintsUsed
            }
            if state.pointee.overflowLeft == 0 {
                let chunk = UnsafeMutablePointer<Int>.allocate(capacity: 2 * Self.hintsPerOverflowChunk)
                state.pointee.overflowChunks.append(chunk)
                state.pointee.overflowNext = chunk
                state.pointee.overflowLeft = Self.hintsPerOverflowChunk
            }
            let next = state.pointee.overflowNext.unsafelyUnwrapped
            state.pointee.overflowNext = next + 2
            state.pointee.overflowLeft -= 1
            return next
        }
        hint.initialize(to: 0)
        (hint + 1).initialize(to: firstFieldOffset)
        return hint
    }
}

/// A byte range of the top-level input. Two 32-bit offsets keep `BinaryValueDecoder` at
/// three words, small enough to be stored inline in an `any Decoder` without allocating;
/// inputs are therefore limited to 4 GiB, which `BinaryInstanceDecoder` checks.
struct BinaryExtent {
    let start: UInt32
    let end: UInt32
}

/// A plain reference to the context that costs no reference counting when copied.
typealias BinaryContextReference = Unmanaged<BinaryDecodingContext>

extension Unmanaged where Instance == BinaryDecodingContext {
    /// Access without retain/release; sound because the top-level call keeps the context alive.
    @inline(__always)
    func with<R>(_ body: (BinaryDecodingContext) throws -> R) rethrows -> R {
        try _withUnsafeGuaranteedRef(body)
    }
}
