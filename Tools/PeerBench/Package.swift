// swift-tools-version: 6.0
// peer-bench: runs Strata's benchmark workloads (library StrataBenchKit of the root package,
// shared with strata-bench) against LMDB and SQLite, so the numbers can be compared with
// Strata's on the same machine. Needs the system libraries liblmdb and libsqlite3
// (apt: liblmdb-dev libsqlite3-dev).
import PackageDescription

let package = Package(
    name: "PeerBench",
    products: [
        .executable(name: "peer-bench", targets: ["peer-bench"]),
    ],
    dependencies: [
        // The root Strata package, for StrataBenchKit only (the workloads, not the engine).
        .package(name: "Strata", path: "../.."),
    ],
    targets: [
        .systemLibrary(name: "CLMDB", path: "Sources/CLMDB",
                       providers: [.apt(["liblmdb-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite",
                       providers: [.apt(["libsqlite3-dev"])]),
        // libmdbx declarations only: the library is loaded at run time (see MDBXLibrary.swift).
        .systemLibrary(name: "CMDBX", path: "Sources/CMDBX"),
        .executableTarget(name: "peer-bench",
                          dependencies: ["CLMDB", "CSQLite", "CMDBX",
                                         .product(name: "StrataBenchKit", package: "Strata")],
                          path: "Sources/peer-bench",
                          linkerSettings: [.linkedLibrary("dl")]),
    ],
    swiftLanguageModes: [.v6]
)
