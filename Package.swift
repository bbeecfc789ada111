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
        .library(name: "StrataEntities", targets: ["StrataEntities"]),
        .executable(name: "strata", targets: ["strata"]),
        .executable(name: "strata-bench", targets: ["strata-bench"]),
        // The engine-neutral benchmark harness, shared with Tools/PeerBench (LMDB, SQLite).
        .library(name: "StrataBenchKit", targets: ["StrataBenchKit"]),
    ],
    targets: [
        // Engine: page file, B+tree, transactions, lock file, reader table, generation counter.
        .target(name: "StrataCore", dependencies: ["CStrataSystem"], path: "Sources/StrataCore"),
        // prctl(PR_SET_TIMERSLACK) for the change poller: Swift cannot call variadic C functions.
        .target(name: "CStrataSystem", path: "Sources/CStrataSystem"),
        // Typed layer: formats, indexes, coders, datastores, observation.
        .target(name: "Strata", dependencies: ["StrataCore"], path: "Sources/Strata"),
        // Schema-less entities with property history, relationships and get-or-create references.
        .target(name: "StrataEntities", dependencies: ["Strata", "StrataCore"], path: "Sources/StrataEntities"),
        .executableTarget(name: "strata", dependencies: ["Strata", "StrataCore", "StrataEntities"], path: "Tools/strata", exclude: ["README.md"]),
        // Benchmark workloads written against a KVStore protocol; no dependency on the engine.
        .target(name: "StrataBenchKit", path: "Tools/StrataBenchKit"),
        .executableTarget(name: "strata-bench", dependencies: ["Strata", "StrataCore", "StrataEntities", "StrataBenchKit"], path: "Tools/strata-bench"),
        // Child process used by the multi-process tests (tests never fork the test process).
        .executableTarget(name: "strata-child", dependencies: ["Strata", "StrataCore", "StrataEntities", "StrataTestFixtures"], path: "Tests/StrataChild"),
        // Formats and helpers shared by the tests and strata-child.
        .target(name: "StrataTestFixtures", dependencies: ["Strata"], path: "Tests/StrataTestFixtures"),
        .testTarget(name: "StrataCoreTests", dependencies: ["StrataCore", "StrataTestFixtures", "strata-child"], path: "Tests/StrataCoreTests",
                    exclude: ["README.md"]),
        .testTarget(name: "StrataEntitiesTests", dependencies: ["StrataEntities", "Strata", "StrataCore", "StrataTestFixtures", "strata-child", "strata"],
                    path: "Tests/StrataEntitiesTests"),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataCore", "StrataTestFixtures", "strata-child", "strata"], path: "Tests/StrataTests"),
    ],
    swiftLanguageModes: [.v6]
)
