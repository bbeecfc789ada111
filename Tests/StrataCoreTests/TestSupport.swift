import Foundation
@testable import StrataCore
@_exported import StrataTestFixtures

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A new store in its own temporary directory (removed when the returned directory goes away:
/// keep it alive as long as the store), committing without flushes: for tests of structure and
/// coordination, not of power loss. `configure` sets further options.
func unsyncedStore(_ configure: (inout DatabaseOptions) -> Void = { _ in }) throws -> (TemporaryDirectory, Database) {
    let dir = TemporaryDirectory()
    var options = DatabaseOptions()
    options.durability = .none
    configure(&options)
    return (dir, try Database(path: dir.path, options: options))
}

extension Transaction {
    func string(_ key: String, in tree: Tree) throws -> String? {
        try get(key, in: tree).map { String(decoding: $0.bytes, as: UTF8.self) }
    }
}

