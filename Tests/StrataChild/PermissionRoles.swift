import Foundation
@_spi(Testing) import StrataCore
import StrataTestFixtures

// MARK: Permissions

/// Drops to uid/gid 65534 (when running as root) and opens the store in the given mode
/// ("rw" or "ro"); prints "opened" or "error DESCRIPTION".
func openAsNobody(path: String, arguments: [String]) {
    if geteuid() == 0 {
        guard setgid(65534) == 0, setuid(65534) == 0 else { fail("cannot drop privileges: errno \(errno)") }
    }
    do {
        _ = try Database(path: path, mode: arguments[2] == "rw" ? .readWrite : .readOnly)
        say("opened")
    } catch let error as StrataError {
        say("refused \(error)")
    } catch {
        say("untyped \(error)")
    }
}
