// libmdbx, loaded at run time: `MDBX_LIBRARY` (a path to libmdbx.so), else the dynamic linker's
// search path. The PyPI wheel `libmdbx` ships a built libmdbx.so; Tools/PeerBench/get-mdbx.sh
// fetches it. Without it, `--engine mdbx` fails with a message and the other engines still run.
import CMDBX
import Glibc
import StrataBenchKit

struct MDBXLibrary: @unchecked Sendable {
    let envCreate: pb_mdbx_env_create
    let envSetGeometry: pb_mdbx_env_set_geometry
    let envOpen: pb_mdbx_env_open
    let envClose: pb_mdbx_env_close
    let txnBegin: pb_mdbx_txn_begin
    let txnCommit: pb_mdbx_txn_commit
    let txnAbort: pb_mdbx_txn_abort
    let txnID: pb_mdbx_txn_id
    let dbiOpen: pb_mdbx_dbi_open
    let put: pb_mdbx_put
    let get: pb_mdbx_get
    let cursorOpen: pb_mdbx_cursor_open
    let cursorGet: pb_mdbx_cursor_get
    let cursorClose: pb_mdbx_cursor_close
    let strerror: pb_mdbx_strerror
    /// "0.13.12.15 (v0.13.12-15-g...)".
    let version: String

    /// The library, loaded once; nil (with the reason) when it cannot be.
    static let loaded: Result<MDBXLibrary, LoadError> = load()

    struct LoadError: Error, CustomStringConvertible { let description: String }

    static var shared: MDBXLibrary {
        switch loaded {
        case .success(let library): return library
        case .failure(let error): BenchMain.fatal("mdbx: \(error) (run Tools/PeerBench/get-mdbx.sh and set MDBX_LIBRARY)")
        }
    }

    private static func load() -> Result<MDBXLibrary, LoadError> {
        let path = getenv("MDBX_LIBRARY").map { String(cString: $0) } ?? "libmdbx.so"
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(LoadError(description: "cannot load \(path): \(String(cString: dlerror()))"))
        }
        var missing: [String] = []
        func symbol<T>(_ name: String, as _: T.Type) -> T? {
            guard let address = dlsym(handle, name) else { missing.append(name); return nil }
            return unsafeBitCast(address, to: T.self)
        }
        let library = MDBXLibrary(
            envCreate: symbol("mdbx_env_create", as: pb_mdbx_env_create.self) ?? { _ in -1 },
            envSetGeometry: symbol("mdbx_env_set_geometry", as: pb_mdbx_env_set_geometry.self) ?? { _, _, _, _, _, _, _ in -1 },
            envOpen: symbol("mdbx_env_open", as: pb_mdbx_env_open.self) ?? { _, _, _, _ in -1 },
            envClose: symbol("mdbx_env_close", as: pb_mdbx_env_close.self) ?? { _ in -1 },
            txnBegin: symbol("mdbx_txn_begin", as: pb_mdbx_txn_begin.self) ?? { _, _, _, _ in -1 },
            txnCommit: symbol("mdbx_txn_commit", as: pb_mdbx_txn_commit.self) ?? { _ in -1 },
            txnAbort: symbol("mdbx_txn_abort", as: pb_mdbx_txn_abort.self) ?? { _ in -1 },
            txnID: symbol("mdbx_txn_id", as: pb_mdbx_txn_id.self) ?? { _ in 0 },
            dbiOpen: symbol("mdbx_dbi_open", as: pb_mdbx_dbi_open.self) ?? { _, _, _, _ in -1 },
            put: symbol("mdbx_put", as: pb_mdbx_put.self) ?? { _, _, _, _, _ in -1 },
            get: symbol("mdbx_get", as: pb_mdbx_get.self) ?? { _, _, _, _ in -1 },
            cursorOpen: symbol("mdbx_cursor_open", as: pb_mdbx_cursor_open.self) ?? { _, _, _ in -1 },
            cursorGet: symbol("mdbx_cursor_get", as: pb_mdbx_cursor_get.self) ?? { _, _, _, _ in -1 },
            cursorClose: symbol("mdbx_cursor_close", as: pb_mdbx_cursor_close.self) ?? { _ in },
            strerror: symbol("mdbx_strerror", as: pb_mdbx_strerror.self) ?? { _ in nil },
            version: {
                guard let address = dlsym(handle, "mdbx_version") else { return "unknown" }
                let info = address.assumingMemoryBound(to: MDBX_version_info.self).pointee
                let describe = info.git.describe.map { String(cString: $0) } ?? ""
                return "\(info.major).\(info.minor).\(info.patch).\(info.tweak) (\(describe))"
            }())
        guard missing.isEmpty else {
            return .failure(LoadError(description: "\(path) lacks \(missing.joined(separator: ", "))"))
        }
        return .success(library)
    }

    @inline(__always)
    func check(_ rc: Int32, _ what: @autoclosure () -> String) {
        if rc != PB_MDBX_SUCCESS {
            let message = strerror(rc).map { String(cString: $0) } ?? "error \(rc)"
            BenchMain.fatal("mdbx \(what()): \(message)")
        }
    }
}
