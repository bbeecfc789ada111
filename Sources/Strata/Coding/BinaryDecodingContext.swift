/// State shared by every decoder and container of one top-level decode call.
///
/// Why it exists: the standard library copies a container value on *every* `decode` call
/// and passes decoders around as existentials. Any reference-counted field in those values
/// turns each field access into atomic retain/release traffic, which measured as the
/// dominant cost of decoding a small struct. So decoders and containers hold only plain
/// values (offsets, raw pointers, this context, a path-node index) and everything that
/// needs managed storage lives in the `BinaryDecodingState` this context points to.
///
/// Lifetime invariant: a context lives from `begin(buffer:)` to `end()`, which the top-level
/// decode call pairs (`BinaryInstanceDecoder.decode`); decoders and containers must not be used
/// after that. That already holds for the raw input buffer they read, and `Decodable`
/// implementations do not retain decoders or containers. The state comes from the thread's
/// `BinaryDecodingThread` and goes back to it, so a decode allocates nothing for it.
struct BinaryDecodingContext {
    private let state: UnsafeMutablePointer<BinaryDecodingState>

    private static let statesPerChunk = 16

    /// The path index meaning "no key" (the top-level value).
    static let rootPath = -1

    /// Deepest nesting accepted when decoding (comfortably within a 512 KiB thread stack).
    static let maximumDepth = 256

    /// A context for decoding `buffer`; the caller must call `end()` when the decode is over
    /// (also when it throws).
    static func begin(buffer: UnsafeRawBufferPointer) -> BinaryDecodingContext {
        let state = BinaryDecodingThread.takeState() ?? BinaryDecodingState.allocateUnpooled()
        state.pointee.buffer = buffer
        return BinaryDecodingContext(state: state)
    }

    /// Ends the decode: drops what it built and hands the state back.
    func end() {
        state.pointee.reset()
        if let idleStates = state.pointee.idleStates {
            state.pointee.nextIdle = idleStates.pointee
            idleStates.pointee = state
        } else {
            state.deinitialize(count: 1)
            state.deallocate()
        }
    }

    // MARK: Extents

    func bytes(in extent: BinaryExtent) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: state.pointee.buffer[Int(extent.start)..<Int(extent.end)])
    }

    /// The extent of `bytes`, which must be a sub-buffer of the input.
    func extent(of bytes: UnsafeRawBufferPointer) -> BinaryExtent {
        guard let base = state.pointee.buffer.baseAddress, let start = bytes.baseAddress else {
            return BinaryExtent(start: 0, end: 0)
        }
        let offset = start - base
        return BinaryExtent(start: UInt32(offset), end: UInt32(offset + bytes.count))
    }

    // MARK: Coding paths

    /// Adds the path node of a nested value. Throws beyond `maximumDepth` levels: each
    /// level costs stack in the recursive `Decodable` calls, so forged input for a recursive
    /// type could otherwise nest deep enough to overflow the stack and crash.
    func appendPathNode(parent: Int, key: any CodingKey) throws -> Int {
        let depth = parent < 0 ? 1 : state.pointee.pathNodes[parent].depth + 1
        guard depth <= Self.maximumDepth else {
            throw BinaryFormatError("values nested deeper than \(Self.maximumDepth) levels")
                .decodingError(codingPath: codingPath(at: parent) + [key])
        }
        state.pointee.pathNodes.append((parent, key, depth))
        return state.pointee.pathNodes.count - 1
    }

    func codingPath(at node: Int) -> [any CodingKey] {
        var keys: [any CodingKey] = []
        var current = node
        while current >= 0 {
            keys.append(state.pointee.pathNodes[current].key)
            current = state.pointee.pathNodes[current].parent
        }
        return keys.reversed()
    }

    // MARK: Keyed containers

    /// The thread's cached container boxes; nil if the thread has none (no thread-specific slot).
    var containerCache: BinaryKeyedContainerCache? { state.pointee.containerCache }

    /// The process's decoding shortcuts, as a plain value (see `BinaryDecodingShortcuts`).
    var shortcuts: BinaryDecodingShortcuts { state.pointee.shortcuts }

    /// Storage for the state of a keyed container that `BinaryKeyedContainerCache` did not
    /// supply (a nested container of the same key type, or a full cache). The address stays
    /// valid until the decode call ends: chunks never move. States are plain values, so
    /// nothing is deinitialized. A decode whose containers all come from the cache allocates
    /// no chunk.
    func makeKeyedState(_ initial: BinaryKeyedContainerState) -> UnsafeMutablePointer<BinaryKeyedContainerState> {
        if state.pointee.statesLeft == 0 {
            let chunk = UnsafeMutablePointer<BinaryKeyedContainerState>.allocate(capacity: Self.statesPerChunk)
            state.pointee.stateChunks.append(chunk)
            state.pointee.nextState = chunk
            state.pointee.statesLeft = Self.statesPerChunk
        }
        let slot = state.pointee.nextState.unsafelyUnwrapped
        state.pointee.nextState = slot + 1
        state.pointee.statesLeft -= 1
        slot.initialize(to: initial)
        return slot
    }
}

/// The managed part of a decode call's shared state (see `BinaryDecodingContext`). Pooled per
/// thread (`BinaryDecodingThread`): between decodes it holds no input and no path nodes, only
/// the capacity of its arrays.
struct BinaryDecodingState {
    /// The whole top-level input of the decode in progress.
    var buffer = UnsafeRawBufferPointer(start: nil, count: 0)
    /// Coding paths as a parent-linked tree: each nested value adds one node. Append-only
    /// during a decode, so a path index stays valid however containers are interleaved.
    var pathNodes: [(parent: Int, key: any CodingKey, depth: Int)] = []
    /// Heap chunks for keyed container states (`makeKeyedState`), the next free one and how
    /// many are left in the current chunk.
    var stateChunks: [UnsafeMutablePointer<BinaryKeyedContainerState>] = []
    var nextState: UnsafeMutablePointer<BinaryKeyedContainerState>?
    var statesLeft = 0
    /// The owning thread's cached container boxes (nil for an unpooled state).
    let containerCache: BinaryKeyedContainerCache?
    /// Read once when the state is made, not per field.
    let shortcuts = BinaryDecodingShortcuts.confirmed
    /// The owning thread's list of idle states, which `end()` returns this one to; nil for a
    /// state allocated for one decode only.
    let idleStates: UnsafeMutablePointer<UnsafeMutablePointer<BinaryDecodingState>?>?
    /// The next idle state while this one is idle.
    var nextIdle: UnsafeMutablePointer<BinaryDecodingState>?

    init(containerCache: BinaryKeyedContainerCache?, idleStates: UnsafeMutablePointer<UnsafeMutablePointer<BinaryDecodingState>?>?) {
        self.containerCache = containerCache
        self.idleStates = idleStates
    }

    /// A state for one decode on a thread without a `BinaryDecodingThread`.
    static func allocateUnpooled() -> UnsafeMutablePointer<BinaryDecodingState> {
        let state = UnsafeMutablePointer<BinaryDecodingState>.allocate(capacity: 1)
        state.initialize(to: BinaryDecodingState(containerCache: nil, idleStates: nil))
        return state
    }

    /// Path nodes a pooled state keeps room for between decodes; a decode that needed more (one
    /// node per nested value: a long array of structs) gives its memory back instead of pinning
    /// its peak for the thread's life.
    static let keptPathNodeCapacity = 4096

    /// Forgets the finished decode: its input, path nodes (keeping a bounded capacity) and
    /// container state chunks. Cheap when the decode built neither.
    mutating func reset() {
        buffer = UnsafeRawBufferPointer(start: nil, count: 0)
        if !pathNodes.isEmpty {
            pathNodes.removeAll(keepingCapacity: pathNodes.capacity <= Self.keptPathNodeCapacity)
        }
        if !stateChunks.isEmpty {
            for chunk in stateChunks { chunk.deallocate() }
            stateChunks.removeAll(keepingCapacity: true)
        }
        nextState = nil
        statesLeft = 0
    }
}
