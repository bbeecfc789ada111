/// The shared state of one `BinaryInstanceEncoder.encode(_:)` call: the output bytes and
/// the stack of open frames (see `BinaryEncodingFrame`).
///
/// Misuse that the non-throwing parts of the `Encoder` API cannot report immediately (for
/// example requesting a keyed container for a value that already wrote a primitive) is
/// recorded in `deferredError` and thrown when encoding finishes.
final class BinaryEncodingSink {
    var bytes: [UInt8] = []
    private(set) var frames: [BinaryEncodingFrame] = []
    private var nextFrameID: UInt32 = 0
    private(set) var deferredError: EncodingError?

    init() {
        bytes.reserveCapacity(128)
        frames.reserveCapacity(8)
    }

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
        frames[handle.depth].countPosition = bytes.count
        bytes.append(0)
    }

    func recordError(_ error: EncodingError) {
        if deferredError == nil { deferredError = error }
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
            bytes.append(0)  // an empty keyed container: "present, no fields"
        case .keyed:
            if frame.ordering == .dictionary {
                BinaryEntrySorter.sortKeyedEntries(&bytes, region: (frame.countPosition + 1)..<bytes.count, count: frame.count)
            }
            patchVarint(at: frame.countPosition, value: frame.count)
        case .unkeyed:
            if frame.ordering != .asWritten {
                BinaryEntrySorter.sortUnkeyedEntries(
                    &bytes, region: (frame.countPosition + 1)..<bytes.count, count: frame.count,
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

    // MARK: Bytes

    /// Writes a 1-byte slot-length placeholder and returns its position.
    func beginSlot() -> Int {
        bytes.append(0)
        return bytes.count - 1
    }

    /// Patches the placeholder at `lengthPosition` with the number of bytes written after it.
    func endSlot(lengthPosition: Int) {
        patchVarint(at: lengthPosition, value: bytes.count - lengthPosition - 1)
    }

    /// Replaces a 1-byte placeholder with the varint of `value`; values of 128 or more need
    /// a wider varint, so the following bytes are shifted (rare: only large slots/containers).
    private func patchVarint(at position: Int, value: Int) {
        if value < 0x80 {
            bytes[position] = UInt8(value)
            return
        }
        var encoded: [UInt8] = []
        BinaryVarint.append(UInt64(value), to: &encoded)
        bytes.replaceSubrange(position..<(position + 1), with: encoded)
    }

    func writeKey(_ key: some CodingKey) {
        var name = key.stringValue
        name.withUTF8 { utf8 in
            BinaryVarint.append(UInt64(utf8.count), to: &bytes)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Writes a primitive into its own length-prefixed slot.
    func writeSlot(_ value: some BinaryPrimitive) {
        let lengthPosition = beginSlot()
        value.appendBinary(to: &bytes)
        endSlot(lengthPosition: lengthPosition)
    }

    /// Writes an empty slot, which is how `nil` is represented.
    func writeNilSlot() {
        bytes.append(0)
    }

    /// Encodes an arbitrary value into a new length-prefixed slot nested under the frame at
    /// `parent`, closing the slot (and anything the value left open) before returning.
    func writeSlot<T: Encodable>(_ value: T, key: any CodingKey, parent: BinaryFrameHandle) throws {
        let lengthPosition = beginSlot()
        if BinarySpecialValues.appendIfSpecial(value, to: &bytes) {
            endSlot(lengthPosition: lengthPosition)
            return
        }
        let handle = pushFrame(lengthPosition: lengthPosition, key: key, ordering: .of(T.self))
        try value.encode(to: BinaryValueEncoder(sink: self, handle: handle))
        close(handle)
    }

    /// Opens a new slot whose content will be a container or a value written later through
    /// the returned handle (nested containers and super encoders).
    func openSlot(key: any CodingKey, content: BinaryEncodingFrame.Content) -> BinaryFrameHandle {
        let lengthPosition = beginSlot()
        let handle = pushFrame(lengthPosition: lengthPosition, key: key, ordering: .asWritten)
        if content != .empty { openContainer(content, at: handle) }
        return handle
    }
}
