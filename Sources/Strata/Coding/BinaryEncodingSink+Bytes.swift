/// Byte-level writing for `BinaryEncodingSink`: slots, keys and placeholder patching.
///
/// Invariant: a slot is written as a 1-byte length placeholder followed by the value; the
/// placeholder is patched once the value is complete (see `BinaryEncodingFrame`).
extension BinaryEncodingSink {
    /// Writes a 1-byte slot-length placeholder and returns its position.
    func beginSlot() -> Int {
        output.append(0)
        return output.count - 1
    }

    /// Patches the placeholder at `lengthPosition` with the number of bytes written after it.
    func endSlot(lengthPosition: Int) {
        patchVarint(at: lengthPosition, value: output.count - lengthPosition - 1)
    }

    /// Replaces a 1-byte placeholder with the varint of `value`; values of 128 or more need
    /// a wider varint, so the following bytes are shifted (rare: only large slots/containers).
    func patchVarint(at position: Int, value: Int) {
        if value < 0x80 {
            output[position] = UInt8(truncatingIfNeeded: value)
        } else {
            widenPlaceholder(at: position, value: value)
        }
    }

    @inline(never)
    private func widenPlaceholder(at position: Int, value: Int) {
        var encoded: [UInt8] = []
        BinaryVarint.append(UInt64(value), to: &encoded)
        encoded.withUnsafeBytes { output.replaceByte(at: position, with: $0) }
    }

    func writeKey(_ key: some CodingKey) {
        output.appendLengthPrefixedUTF8(key.stringValue)
    }

    /// Writes a primitive into its own length-prefixed slot.
    @inline(__always)
    func writeSlot(_ value: some BinaryPrimitive) {
        let lengthPosition = beginSlot()
        value.appendBinary(to: &output)
        endSlot(lengthPosition: lengthPosition)
    }

    /// Writes an empty slot, which is how `nil` is represented.
    func writeNilSlot() {
        output.append(0)
    }

    /// Encodes an arbitrary value into a new length-prefixed slot nested under the innermost
    /// frame, closing the slot (and anything the value left open) before returning. The key
    /// is only boxed into an existential (for coding paths) when the value needs a frame.
    func writeSlot<T: Encodable>(_ value: T, key: some CodingKey) throws {
        let lengthPosition = beginSlot()
        if BinarySpecialValues.appendIfSpecial(value, to: &output) {
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
