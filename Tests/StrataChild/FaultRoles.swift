// The dispatch of the fault-tolerance roles (Tests/StrataCoreTests/README.md, "Fault tolerance"),
// each kind in its own file: CrashRoles (a writer that kills itself inside commit, a writer under a
// file-size limit), FuzzExerciser, SoakRoles (bank transfers), ReaderRoles (churning, pinning and
// `withSnapshot` readers), PermissionRoles (a privilege-dropping opener).
import Foundation
@_spi(Testing) import StrataCore
import StrataTestFixtures

/// Runs `role` if it is one of the fault roles; returns false if it is not.
func runFaultRole(_ role: String, _ arguments: [String]) throws -> Bool {
    let path = arguments[1]
    switch role {
    case "kill-writer": try killWriter(path: path, arguments: arguments)
    case "fsize-writer": try fileSizeLimitedWriter(path: path)
    case "fuzz-exercise": fuzzExercise(log: arguments.count > 2 ? arguments[2] : nil)
    case "bank-writer": try bankWriter(path: path, arguments: arguments)
    case "bank-reader": try bankReader(path: path, arguments: arguments)
    case "churn-reader": try churnReader(path: path)
    case "pin-until": try pinUntilTold(path: path)
    case "snapshot-reader": try snapshotReader(path: path, mode: arguments.count > 2 ? arguments[2] : "loop")
    case "open-as-nobody": openAsNobody(path: path, arguments: arguments)
    case "read-only-reader": readOnlyReader(path: path)
    default: return false
    }
    return true
}
