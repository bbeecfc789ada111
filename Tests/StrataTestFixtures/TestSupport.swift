// Helpers shared by every test target: temporary stores, seeded randomness, child processes.
import Foundation

/// A fresh store directory under the system temporary directory, removed when dropped.
public final class TemporaryDirectory {
    public let path: String

    public init(_ label: String = "store") {
        let base = NSTemporaryDirectory() + "strata-tests-\(getpid())-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        path = base + "/\(label).strata"
    }

    public var parent: String { (path as NSString).deletingLastPathComponent }

    deinit { try? FileManager.default.removeItem(atPath: parent) }
}

/// SplitMix64: small, fast, and reproducible from a printed seed.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The seed for a randomized test: STRATA_SEED if set, otherwise random; always printed.
public func testSeed(_ name: String) -> UInt64 {
    let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
    print("[\(name)] seed \(seed) (rerun with STRATA_SEED=\(seed))")
    return seed
}

/// Path of an executable built by this package, next to the test bundle.
public func builtExecutable(_ name: String) -> String {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    let fallback = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/\(name)").path
    return fallback
}
