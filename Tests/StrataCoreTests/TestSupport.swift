import Foundation
@testable import StrataCore
@_exported import StrataTestFixtures

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

extension Transaction {
    func string(_ key: String, in tree: Tree) throws -> String? {
        try get(key, in: tree).map { String(decoding: $0.bytes, as: UTF8.self) }
    }
}

