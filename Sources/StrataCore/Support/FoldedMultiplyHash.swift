/// The page checksum of formats 3 and 4 (see `PageChecksum`): a 64-bit hash built on the folded multiply
/// ("mum"): one 64 x 64 -> 128-bit multiply per 16 bytes, whose high and low halves are xored.
/// Four independent lanes of 16 bytes each keep the multiplier busy; each lane chains its own
/// state into its next step, so a change anywhere in a lane reaches its final state. A 4 KiB page
/// costs ~2.4k instructions against ~5.5k for `Checksum` (two multiplies and two shifts per 8
/// bytes); per 16 bytes one multiply and about eight other instructions, two of them moves into and out of
/// the registers x86-64's `mul` works in (BMI2's `mulx` would save those, but is not baseline).
///
/// It only needs to catch torn writes, bit rot and foreign bytes, not adversaries. Accepted
/// weaknesses, and why they do not matter for that:
/// - The zero product. A step is `fold(x ^ state, y ^ (state &+ k))`: the product is 0, and the
///   state forgets the bytes before it, only when a data word equals a value derived from the
///   running state (itself a pseudo-random function of the page number, the transaction id and
///   every earlier byte). Both operands depend on the state, so no fixed word that data could hold
///   (a constant of this file, a hash function's tables stored in a value) ever zeroes a step;
///   natural data reaches it with odds of about 2^-64 per word. Only a page crafted against its
///   own number, transaction id and contents does. (An earlier draft xored a data word with a
///   constant alone; data embedding that constant then silenced a whole lane.)
/// - `fold` is not a bijection (high ^ low), so distinct inputs collide with odds of about 2^-64
///   per comparison, the same as any 64-bit checksum.
/// - The last partial 16 bytes are read as the final 16 bytes of the input, overlapping bytes
///   already hashed; the length is folded into the result, so inputs of different lengths that
///   share those bytes still differ.
///
/// The value is part of the on-disk format: never change it without a new format version (a
/// known-answer test pins it).
enum FoldedMultiplyHash {
    // Arbitrary odd constants with balanced bits (fractional parts of square roots of primes, the
    // first one made odd).
    private static let k0: UInt64 = 0x6A09_E667_F3BC_C909
    private static let k1: UInt64 = 0xBB67_AE85_84CA_A73B
    private static let k2: UInt64 = 0x3C6E_F372_FE94_F82B
    private static let k3: UInt64 = 0xA54F_F53A_5F1D_36F1
    private static let k4: UInt64 = 0x510E_527F_ADE6_82D1
    private static let k5: UInt64 = 0x9B05_688C_2B3E_6C1F
    private static let k6: UInt64 = 0x1F83_D9AB_FB41_BD6B
    private static let k7: UInt64 = 0x5BE0_CD19_137E_2179

    static func hash(_ pointer: UnsafeRawPointer, count: Int, seed: UInt64) -> UInt64 {
        // The seed (a page's number and transaction id: small numbers) is mixed first, so that
        // even the first step's zero-product words are pseudo-random, not a constant xor a small
        // number. (`fold` of these operands is 0 only for a seed equal to `k0`.)
        let start = fold(seed ^ k0, k3)
        var h = start ^ k4
        var offset = 0
        if count >= 64 {
            var lane0 = start ^ k0, lane1 = start ^ k1, lane2 = start ^ k2, lane3 = start ^ k3
            while count &- offset >= 64 {
                lane0 = step(lane0, word(pointer, offset), word(pointer, offset &+ 8), k4)
                lane1 = step(lane1, word(pointer, offset &+ 16), word(pointer, offset &+ 24), k5)
                lane2 = step(lane2, word(pointer, offset &+ 32), word(pointer, offset &+ 40), k6)
                lane3 = step(lane3, word(pointer, offset &+ 48), word(pointer, offset &+ 56), k7)
                offset &+= 64
            }
            // The lanes in order, each chained into the state (a lane is lost only on a zero product).
            h = step(h, lane0, lane1, k1)
            h = step(h, lane2, lane3, k2)
        }
        while count &- offset >= 16 {
            h = step(h, word(pointer, offset), word(pointer, offset &+ 8), k5)
            offset &+= 16
        }
        let rest = count &- offset
        if rest > 0 {
            var x: UInt64
            var y: UInt64
            if count >= 16 {
                x = word(pointer, count &- 16)
                y = word(pointer, count &- 8)
            } else if rest >= 8 {
                x = word(pointer, offset)
                y = word(pointer, count &- 8)
            } else if rest >= 4 {
                x = UInt64(pointer.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                y = UInt64(pointer.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self))
            } else {
                // 1...3 bytes: first, middle and last (some may be the same byte; the length differs).
                x = UInt64(pointer.load(fromByteOffset: offset, as: UInt8.self)) << 16
                    | UInt64(pointer.load(fromByteOffset: offset &+ rest / 2, as: UInt8.self)) << 8
                    | UInt64(pointer.load(fromByteOffset: count &- 1, as: UInt8.self))
                y = 0
            }
            h = step(h, x, y, k6)
        }
        // Final avalanche: the length, then a multiply by a constant (never zero) so that every
        // bit of the state reaches every bit of the result. (The first operand is 0 only when the
        // state equals a value of the length: odds of 2^-64, as for a step.)
        h = fold(h ^ UInt64(truncatingIfNeeded: count) ^ k7, k0)
        return h ^ (h >> 29)
    }

    @inline(__always) private static func word(_ pointer: UnsafeRawPointer, _ offset: Int) -> UInt64 {
        pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }

    /// One step: 16 data bytes `x`, `y` into `state`. Both operands of the multiply carry the state,
    /// so a zero product needs a data word equal to a state-derived value (see the type's comment).
    @inline(__always) private static func step(_ state: UInt64, _ x: UInt64, _ y: UInt64, _ k: UInt64) -> UInt64 {
        fold(x ^ state, y ^ (state &+ k))
    }

    /// The folded multiply: the 128-bit product's halves xored.
    @inline(__always) private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }
}
