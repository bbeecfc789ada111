// A small format for tests that need many instances quickly (streams over a million instances).
import Foundation
import Strata

public struct Tick: Codable, Identifiable, Sendable, Equatable {
    public var id: Int
    public var value: Int

    public init(id: Int, value: Int) {
        self.id = id
        self.value = value
    }
}

public struct TickFormat: DatastoreFormat {
    public static let name = "ticks"
    public typealias Instance = Tick
    public typealias Identifier = Int
    public init() {}
}
