// Benchmark data, the same bytes for every engine (see Tools/PeerBench/README.md).

/// SplitMix64 pseudo-random generator.
struct SplitMix64 {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    @inline(__always)
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum BenchData {
    static let keySize = 16
    static let valueSize = 100

    /// key(i): decimal `i`, zero-padded to 16 ASCII digits.
    @inline(__always)
    static func writeKey(_ i: Int, into p: UnsafeMutablePointer<UInt8>) {
        var v = UInt64(i)
        var idx = keySize - 1
        while idx >= 0 {
            p[idx] = 0x30 &+ UInt8(truncatingIfNeeded: v % 10)
            v /= 10
            idx -= 1
        }
    }

    /// value(i, salt): the first 100 bytes of successive little-endian SplitMix64 outputs,
    /// seeded with `UInt64(i) ^ (salt &* 0x9E3779B97F4A7C15)`.
    @inline(__always)
    static func writeValue(_ i: Int, salt: UInt64 = 0, into p: UnsafeMutablePointer<UInt8>) {
        var rng = SplitMix64(seed: UInt64(i) ^ (salt &* 0x9E37_79B9_7F4A_7C15))
        var off = 0
        while off < valueSize {
            var word = rng.next()
            let n = min(8, valueSize - off)
            for b in 0..<n {
                p[off + b] = UInt8(truncatingIfNeeded: word)
                word >>= 8
            }
            off += n
        }
    }

    /// Fisher–Yates permutation of 0..<n (i from n-1 down to 1, j = next() % (i+1)), seed 42.
    static func permutation(_ n: Int) -> [Int] {
        var order = Array(0..<n)
        guard n > 1 else { return order }
        var rng = SplitMix64(seed: 42)
        var i = n - 1
        while i >= 1 {
            let j = Int(rng.next() % UInt64(i + 1))
            order.swapAt(i, j)
            i -= 1
        }
        return order
    }
}

/// Reusable key/value buffers (one allocation per workload, none per operation).
final class Scratch {
    let key = UnsafeMutablePointer<UInt8>.allocate(capacity: BenchData.keySize)
    let value = UnsafeMutablePointer<UInt8>.allocate(capacity: 128)

    var keyBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: key, count: BenchData.keySize) }
    var valueBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: value, count: BenchData.valueSize) }

    /// Fills the key buffer with key(i) and the value buffer with value(i, salt).
    @inline(__always)
    func set(_ i: Int, salt: UInt64 = 0) {
        BenchData.writeKey(i, into: key)
        BenchData.writeValue(i, salt: salt, into: value)
    }

    deinit {
        key.deallocate()
        value.deallocate()
    }
}
