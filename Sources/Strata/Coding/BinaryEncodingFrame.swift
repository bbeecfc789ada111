/// One value whose bytes are still being written.
///
/// The encoder streams into a single byte buffer (`BinaryOutputBuffer`). Every value lives in a *slot*: the parent
/// wrote a 1-byte placeholder for the slot length (`lengthPosition`) and the value's bytes
/// follow it. Containers likewise reserve a 1-byte placeholder for their entry count. When
/// the frame is closed, both placeholders are patched (widened in place in the rare case the
/// varint needs more than one byte). Frames form a stack: only the innermost open frame may
/// receive bytes, which holds because Codable encodes depth-first.
struct BinaryEncodingFrame {
    enum Content {
        /// Nothing requested yet. Closed as an empty keyed container (not as nil), because
        /// a value that encodes nothing is still a present value.
        case empty
        case keyed
        case unkeyed
        /// Primitive bytes or an explicit nil (zero bytes) written by a single-value container.
        case single
    }

    /// Unique per encoding run; lets stale container handles be detected.
    let id: UInt32
    /// Position of the slot-length placeholder, or `nil` for the top-level value (which is
    /// delimited by the end of the buffer).
    let lengthPosition: Int?
    /// The key this value is stored under in its parent, for `codingPath`.
    let key: (any CodingKey)?
    var ordering: BinaryEntryOrdering
    var content: Content = .empty
    /// Position of the entry-count placeholder of a keyed/unkeyed container.
    var countPosition = 0
    var count = 0
}

/// Identifies a frame from a container or encoder value. A handle is *stale* once its frame
/// has been closed, e.g. when a container is used again after a sibling value was encoded.
struct BinaryFrameHandle {
    let depth: Int
    let id: UInt32
}
