import Foundation
import Strata
import StrataCore

// The demo's data: orders in a typed datastore with two indexes, written by the demo writer and
// read by the demo workers (separate processes sharing the store).

struct Order: Codable, Identifiable, Sendable {
    enum Status: String, Codable, Sendable { case open, paid, shipped }

    var id: UInt64
    var customer: String
    /// In cents.
    var amount: Int
    var status: Status
    var updated: Date
}

struct OrderFormat: DatastoreFormat {
    static let name = "orders"
    typealias Instance = Order
    typealias Identifier = UInt64

    init() {}

    /// Workers query ranges of amounts.
    let amount = Index(\.amount)
    let customer = Index(\.customer)
}

enum DemoData {
    /// Order ids are drawn from 1...idSpace: the writer creates, updates and deletes among them,
    /// so the live set stays near `steadyFraction` of the space and freed pages get reused.
    static let idSpace: UInt64 = 10_000
    /// With a 30% chance of deleting an existing order, creates balance deletes at 1/1.3 ≈ 77%.
    static let deleteChance = 0.3
    static let steadyFraction = 1 / 1.3
    static let maximumAmount = 100_000

    static func randomOrder(id: UInt64, using random: inout some RandomNumberGenerator) -> Order {
        Order(id: id, customer: "customer-\(Int.random(in: 1...500, using: &random))",
              amount: Int.random(in: 100...maximumAmount, using: &random),
              status: [.open, .paid, .shipped].randomElement(using: &random)!, updated: Date())
    }

    static func durability(_ name: String) -> Durability {
        switch name {
        case "none": return .none
        case "nometasync": return .full // the same since format 2 (one flush per commit)
        default: return .full
        }
    }
}

/// The last line a demo child prints on stdout, as JSON.
struct DemoChildReport: Codable {
    var role: String
    var worker = 0
    var seconds = 0.0
    // Writer
    var commits = 0
    var created = 0
    var updated = 0
    var deleted = 0
    var firstGeneration: UInt64 = 0
    var lastGeneration: UInt64 = 0
    // Worker
    var loads = 0
    var hits = 0
    var queries = 0
    var queryResults = 0
    var events = 0
    /// Commit-to-notification latencies in microseconds (a sample of at most 50,000).
    var latencies: [UInt32] = []
}

/// Child side of the demo protocol: "ready" on stdout, then wait for "go" on stdin.
enum DemoProtocol {
    static func say(_ line: String) {
        Console.writeAll(1, Array((line + "\n").utf8))
    }

    /// Announces readiness and blocks until the parent says go; false if the parent went away.
    static func readyAndWaitForGo() -> Bool {
        say("ready")
        while let line = readLine() {
            if line == "go" { return true }
        }
        return false
    }

    static func finish(_ report: DemoChildReport) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        say(String(decoding: try encoder.encode(report), as: UTF8.self))
    }
}
