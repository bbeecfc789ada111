// swift-tools-version: 6.0
// peer-bench: runs Strata's benchmark workloads against LMDB and SQLite so the numbers
// can be compared with `strata-bench` on the same machine. Standalone package: no package
// dependencies, only the system libraries liblmdb and libsqlite3 (apt: liblmdb-dev libsqlite3-dev).
import PackageDescription

let package = Package(
    name: "PeerBench",
    products: [
        .executable(name: "peer-bench", targets: ["peer-bench"]),
    ],
    targets: [
        .systemLibrary(name: "CLMDB", path: "Sources/CLMDB",
                       providers: [.apt(["liblmdb-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite",
                       providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(name: "peer-bench", dependencies: ["CLMDB", "CSQLite"],
                          path: "Sources/peer-bench"),
    ],
    swiftLanguageModes: [.v6]
)
