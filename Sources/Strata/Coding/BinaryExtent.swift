/// A byte range of the top-level input. Two 32-bit offsets keep `BinaryValueDecoder` at
/// three words, small enough to be stored inline in an `any Decoder` without allocating;
/// inputs are therefore limited to 4 GiB, which `BinaryInstanceDecoder` checks.
struct BinaryExtent {
    let start: UInt32
    let end: UInt32
}
