/// Which layout shortcuts of the binary decoder this process may take, each confirmed once per
/// process by a `static let` (`BinarySmallString.isAvailable`, `BinarySpecialValues.uuidIsItsBytes`).
///
/// Why a copy: reading a `static let` is a `swift_once` call, and the field decoders read these
/// for every `String` and `UUID` field (four calls and their register spills per small record).
/// A decode state copies them once, when its thread makes it, and each keyed container copies
/// them from there, so a field reads a plain flag of its container.
struct BinaryDecodingShortcuts {
    /// Short ASCII strings may be built in the small-string form (`BinarySmallString`).
    let smallStrings: Bool
    /// A `UUID` may be built from its 16 bytes by bit cast (`BinarySpecialValues.uuidIsItsBytes`).
    let uuidBytes: Bool

    /// The process's shortcuts (reads the statics: not for per-field use).
    static var confirmed: BinaryDecodingShortcuts {
        BinaryDecodingShortcuts(smallStrings: BinarySmallString.isAvailable, uuidBytes: BinarySpecialValues.uuidIsItsBytes)
    }
}
