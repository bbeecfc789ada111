// swift-tools-version: 6.0
// Strata: one writer process and many reader processes sharing a store through mmap.
// No package dependencies: the toolchain only (Foundation, Glibc, Synchronization, Dispatch, Testing).
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StrataCore", targets: ["StrataCore"]),
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "strata-bench", targets: ["strata-bench"]),
    ],
    targets: [
        // Engine: page file, B+tree, transactions, lock file, reader table, generation counter.
        .target(name: "StrataCore", path: "Sources/StrataCore"),
        // Typed layer: formats, indexes, coders, datastores, observation.
        .target(name: "Strata", dependencies: ["StrataCore"], path: "Sources/Strata"),
        .executableTarget(name: "strata", dependencies: ["Strata", "StrataCore"], path: "Tools/strata"),
        .executableTarget(name: "strata-bench", dependencies: ["Strata", "StrataCore"], path: "Tools/strata-bench"),
        // Child process used by the multi-process tests (tests never fork the test process).
        .executableTarget(name: "strata-child", dependencies: ["Strata", "StrataCore"], path: "Tools/strata-child"),
        .testTarget(name: "StrataCoreTests", dependencies: ["StrataCore", "strata-child"], path: "Tests/StrataCoreTests"),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataCore", "strata-child"], path: "Tests/StrataTests"),
    ],
    swiftLanguageModes: [.v6]
)
