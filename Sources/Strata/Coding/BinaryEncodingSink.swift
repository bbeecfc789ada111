/// The shared state of one `BinaryInstanceEncoder.encode(_:)` call: the output bytes and
/// the stack of open frames (see `BinaryEncodingFrame`).
///
/// Misuse that the non-throwing parts of the `Encoder` API cannot report immediately (for
/// example requesting a keyed container for a value that already wrote a primitive) is
/// recorded in `deferredError` and thrown when encoding finishes.
///
/// The stored properties opt out of dynamic exclusivity checking, which otherwise dominated
/// encoding time (a runtime call on every byte-buffer and frame access). This is sound
/// because every access is a short, non-reentrant read or mutation inside this module: no
/// access to `output`, `frames` or `deferredError` is ever held open across a call into user code
/// (`Encodable.encode(to:)`), so accesses can never overlap.
final class BinaryEncodingSink {
    /// The bytes written so far: the caller's prefix, then the value.
    @exclusivity(unchecked) var output: BinaryOutputBuffer
    @exclusivity(unchecked) private(set) var frames: [BinaryEncodingFrame] = []
    @exclusivity(unchecked) private var nextFrameID: UInt32 = 0
    @exclusivity(unchecked) private(set) var deferredError: EncodingError?
    /// The keyed container boxes of this sink's encodes (see `BinaryKeyedEncodingContainerCache`).
    let keyedContainers = BinaryKeyedEncodingContainerCache.allocate()
    /// Whether the sink is inside its top-level `BinaryInstanceEncoder.encode` (set after
    /// `BinaryEncodingSinkCache.take`, cleared first thing in `recycle`). Cached boxes are handed
    /// out only while it is set: the encode then keeps the sink alive, and `recycle` sees every
    /// box that escaped. An encoder or container that escaped its encode holds the sink strongly
    /// and may ask for keyed containers later; those are built owning the sink, since a cached box
    /// (which holds the sink unretained) would outlive it once that escaped object is released.
    @exclusivity(unchecked) var isEncoding = false

    /// `prefix` is copied to the start of the output (see `BinaryInstanceEncoder.encode(_:after:)`).
    init(prefix: [UInt8]) {
        output = BinaryOutputBuffer(capacity: prefix.count + 240)
        output.append(prefix)
        frames.reserveCapacity(8)
    }

    deinit {
        // Freed only when no cached container is alive (`BinaryEncodingSinkCache.recycle`).
        keyedContainers.deallocate()
    }

    /// Makes a finished sink as good as `init(prefix:)`, keeping its storage. Only called on a
    /// sink nothing else references (see `BinaryEncodingSinkCache`), so no handle of an earlier
    /// run exists and frame IDs may start over.
    func reset(prefix: [UInt8]) {
        output.removeAll()
        output.append(prefix)
        // Both are usually empty already; checking first skips the generic clearing paths.
        if !frames.isEmpty { frames.removeAll(keepingCapacity: true) }
        nextFrameID = 0
        if hasDeferredError {
            deferredError = nil
            hasDeferredError = false
        }
    }

    /// Whether `deferredError` is set, readable without copying the (resilient, so opaque)
    /// `EncodingError` out, which the runtime does through outlined value witnesses.
    @exclusivity(unchecked) private(set) var hasDeferredError = false

    // MARK: Frames

    func pushFrame(lengthPosition: Int?, key: (any CodingKey)?, ordering: BinaryEntryOrdering) -> BinaryFrameHandle {
        nextFrameID &+= 1
        frames.append(BinaryEncodingFrame(id: nextFrameID, lengthPosition: lengthPosition, key: key, ordering: ordering))
        return BinaryFrameHandle(depth: frames.count - 1, id: nextFrameID)
    }

    /// Makes `handle`'s frame the innermost one by closing every frame nested inside it.
    /// Returns `false` if the handle is stale.
    func activate(_ handle: BinaryFrameHandle) -> Bool {
        guard handle.depth < frames.count, frames[handle.depth].id == handle.id else { return false }
        while frames.count > handle.depth + 1 { closeInnermostFrame() }
        return true
    }

    /// Like `activate(_:)` but throws for a stale handle (for throwing container methods).
    func activateOrThrow(_ handle: BinaryFrameHandle) throws {
        guard activate(handle) else { throw staleHandleError(handle) }
    }

    /// Closes `handle`'s frame and everything nested in it.
    func close(_ handle: BinaryFrameHandle) {
        while frames.count > handle.depth { closeInnermostFrame() }
    }

    func setContent(_ content: BinaryEncodingFrame.Content, at handle: BinaryFrameHandle) {
        frames[handle.depth].content = content
    }

    func content(at handle: BinaryFrameHandle) -> BinaryEncodingFrame.Content {
        frames[handle.depth].content
    }

    func incrementCount(at handle: BinaryFrameHandle) {
        frames[handle.depth].count += 1
    }

    func count(at handle: BinaryFrameHandle) -> Int {
        handle.depth < frames.count && frames[handle.depth].id == handle.id ? frames[handle.depth].count : 0
    }

    func setOrdering(_ ordering: BinaryEntryOrdering, at handle: BinaryFrameHandle) {
        frames[handle.depth].ordering = ordering
    }

    /// Turns an empty frame into a container (writing the count placeholder), or accepts a
    /// repeated request for the same container kind. Non-throwing because
    /// `Encoder.container(keyedBy:)` is; problems become `deferredError`.
    func openContainer(_ kind: BinaryEncodingFrame.Content, at handle: BinaryFrameHandle) {
        guard activate(handle) else {
            recordError(staleHandleError(handle))
            return
        }
        let current = frames[handle.depth].content
        if current == kind { return }
        guard current == .empty else {
            recordError(EncodingError.invalidValue((), EncodingError.Context(
                codingPath: codingPath(depth: handle.depth),
                debugDescription: "Requested a \(kind) container for a value that already encoded a \(current) value")))
            return
        }
        frames[handle.depth].content = kind
        frames[handle.depth].countPosition = output.count
        output.append(0)
    }

    func recordError(_ error: EncodingError) {
        if !hasDeferredError {
            deferredError = error
            hasDeferredError = true
        }
    }

    func codingPath(depth: Int) -> [any CodingKey] {
        guard depth >= 0, depth < frames.count else { return [] }
        return frames[...depth].compactMap(\.key)
    }

    private func staleHandleError(_ handle: BinaryFrameHandle) -> EncodingError {
        EncodingError.invalidValue((), EncodingError.Context(
            codingPath: codingPath(depth: min(handle.depth, frames.count - 1)),
            debugDescription: "A container was used after a later sibling value had been encoded. "
                + "The streaming binary encoder requires containers to be filled depth-first "
                + "(as synthesized Codable does); interleaved use is not supported."))
    }

    private func closeInnermostFrame() {
        let frame = frames.removeLast()
        switch frame.content {
        case .empty:
            output.append(0)  // an empty keyed container: "present, no fields"
        case .keyed:
            if frame.ordering == .dictionary {
                BinaryEntrySorter.sortKeyedEntries(&output, region: (frame.countPosition + 1)..<output.count, count: frame.count)
            }
            patchVarint(at: frame.countPosition, value: frame.count)
        case .unkeyed:
            if frame.ordering != .asWritten {
                BinaryEntrySorter.sortUnkeyedEntries(
                    &output, region: (frame.countPosition + 1)..<output.count, count: frame.count,
                    pairs: frame.ordering == .dictionary)
            }
            patchVarint(at: frame.countPosition, value: frame.count)
        case .single:
            break
        }
        if let lengthPosition = frame.lengthPosition {
            endSlot(lengthPosition: lengthPosition)
        }
    }
}
