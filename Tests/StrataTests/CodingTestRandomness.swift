import Foundation

/// Deterministic random numbers for reproducible randomized tests (SplitMix64).
struct CodingTestGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

/// A generator for one randomized test. The seed comes from `STRATA_SEED` if set, otherwise
/// it is random; it is always printed so a failure can be reproduced exactly.
func makeCodingTestGenerator(_ testName: String) -> CodingTestGenerator {
    let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0...UInt64.max)
    print("[\(testName)] seed \(seed) (reproduce with STRATA_SEED=\(seed))")
    return CodingTestGenerator(seed: seed)
}

extension RandomNumberGenerator {
    mutating func bytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) }
    }
}
