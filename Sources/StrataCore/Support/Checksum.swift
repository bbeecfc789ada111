/// A 64-bit hash used for the meta checksums of every format and the page checksums of formats 1
/// and 2 (format 3 and 4 pages use the cheaper `FoldedMultiplyHash`; see `PageChecksum`). It only needs
/// to catch torn writes, bit rot and foreign bytes, not adversaries, so it trades cryptographic
/// strength for speed: eight bytes per step, multiply-xorshift mixing. The value is part of the
/// on-disk format of every version: it must never change (a known-answer test pins it).
enum Checksum {
    static let seed: UInt64 = 0x5354_5241_5441_2121 // "STRATA!!"

    static func hash(_ pointer: UnsafeRawPointer, count: Int, seed: UInt64 = Checksum.seed) -> UInt64 {
        var h = seed ^ (UInt64(count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        // Four independent lanes keep the multiplier pipeline busy.
        if count >= 32 {
            var a = h, b = h ^ 0x6A09_E667_F3BC_C908, c = h ^ 0xBB67_AE85_84CA_A73B, d = h ^ 0x3C6E_F372_FE94_F82B
            while offset + 32 <= count {
                a = mix(a ^ pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                b = mix(b ^ pointer.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self))
                c = mix(c ^ pointer.loadUnaligned(fromByteOffset: offset + 16, as: UInt64.self))
                d = mix(d ^ pointer.loadUnaligned(fromByteOffset: offset + 24, as: UInt64.self))
                offset += 32
            }
            h = mix(a ^ rotate(b, 17) ^ rotate(c, 31) ^ rotate(d, 47))
        }
        while offset + 8 <= count {
            h = mix(h ^ pointer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(pointer.load(fromByteOffset: offset, as: UInt8.self)) << shift
            shift += 8
            offset += 1
        }
        return mix(h ^ tail ^ 0xFF51_AFD7_ED55_8CCD)
    }

    @inline(__always) private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &* 0xBF58_476D_1CE4_E5B9
        z ^= z >> 29
        z = z &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 32)
    }

    @inline(__always) private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        (value << bits) | (value >> (64 - bits))
    }
}
