/// Everything a keyed decoding container reads and advances: its fields, the decode call's
/// context and its coding-path node.
///
/// Why it is out of line: `BinaryKeyedDecodingContainer` only points to a state, so a
/// container box that `BinaryKeyedContainerCache` keeps can be handed out again for another
/// record by rewriting its state, without building a new box. A plain value (no
/// reference-counted fields), so overwriting or abandoning one needs no cleanup.
struct BinaryKeyedContainerState {
    var fields: BinaryKeyedFieldScanner
    let context: BinaryDecodingContext
    let pathNode: Int
    /// The key names learned for this container's key type, for a container from
    /// `BinaryKeyedContainerCache`; nil otherwise (keys are then asked for their `stringValue`).
    var keyNames: UnsafeMutablePointer<BinaryKeyNameTable>?
    /// The decode's shortcuts (`BinaryDecodingShortcuts`), next to the fields that use them.
    let shortcuts: BinaryDecodingShortcuts

    /// The state of the keyed container stored in `bytes` at `pathNode`; throws
    /// `DecodingError` if `bytes` is nil or its header is damaged.
    init(bytes: UnsafeRawBufferPointer, context: BinaryDecodingContext, pathNode: Int) throws {
        let header: (count: Int, entriesStart: Int)
        // The usual header, a field count below 128, is one byte (`readContainerHeader` checks
        // the same bounds, and reports damage, for every other case).
        if let base = bytes.baseAddress, !bytes.isEmpty, base.load(as: UInt8.self) < 0x80,
           Int(base.load(as: UInt8.self)) <= (bytes.count - 1) / BinaryContainerLayout.minimumKeyedEntrySize {
            header = (Int(base.load(as: UInt8.self)), 1)
        } else {
            header = try BinaryValueDecoder.readContainerHeader(
                bytes, minimumEntrySize: BinaryContainerLayout.minimumKeyedEntrySize, kind: "keyed", codingPath: context.codingPath(at: pathNode))
        }
        self.fields = BinaryKeyedFieldScanner(bytes: bytes, fieldCount: header.count, fieldsStart: header.entriesStart)
        self.context = context
        self.pathNode = pathNode
        self.shortcuts = context.shortcuts
    }
}
