import Foundation
@_spi(Testing) import StrataCore
import StrataTestFixtures

// MARK: Bank-transfer soak

func accountKey(_ i: Int) -> String { String(format: "acct-%05d", i) }

/// Balance in the first 8 bytes, then padding so the tree has several levels.
func encodeBalance(_ balance: Int64) -> [UInt8] {
    withUnsafeBytes(of: balance.littleEndian) { Array($0) } + [UInt8](repeating: 0xB0, count: 40)
}

func decodeBalance(_ bytes: ByteView) -> Int64? {
    guard bytes.count == 48 else { return nil }
    return bytes.withUnsafeBytes { Int64(littleEndian: $0.loadUnaligned(as: Int64.self)) }
}

/// Moves money between accounts until told to stop (stdin closes or "stop"), then prints
/// "transfers T commits C". Arguments: STORE ACCOUNTS SEED DURABILITY. Creates the accounts with
/// 1000 each if the tree does not exist.
func bankWriter(path: String, arguments: [String]) throws {
    let accounts = Int(arguments[2]) ?? 500
    var random = SeededGenerator(seed: UInt64(arguments[3]) ?? 1)
    var options = DatabaseOptions()
    options.durability = durabilityArgument(arguments[4])
    let db = try Database(path: path, options: options)
    try db.write { tx in
        if try tx.treeIfPresent("bank") == nil {
            let bank = try tx.createTree("bank")
            for i in 0..<accounts { try tx.put(accountKey(i), encodeBalance(1000), in: bank) }
        }
    }
    let stop = StopFlag()
    Thread.detachNewThread {
        while let line = readLine(), line != "stop" {}
        stop.set()
    }
    say("ready")
    var transfers = 0, commits = 0
    while !stop.isSet {
        try db.write { tx in
            let bank = try tx.tree("bank")
            // Mostly a few transfers; sometimes a large transaction that touches many pages.
            let count = Int.random(in: 0..<10, using: &random) == 0 ? 200 : Int.random(in: 1...5, using: &random)
            for _ in 0..<count {
                let from = Int.random(in: 0..<accounts, using: &random)
                let to = Int.random(in: 0..<accounts, using: &random)
                guard let source = try tx.get(accountKey(from), in: bank).flatMap(decodeBalance),
                      let target = try tx.get(accountKey(to), in: bank).flatMap(decodeBalance) else {
                    throw StrataError.misuse("account missing")
                }
                let amount = Int64.random(in: 0...max(0, source), using: &random)
                if from == to { continue }
                try tx.put(accountKey(from), encodeBalance(source - amount), in: bank)
                try tx.put(accountKey(to), encodeBalance(target + amount), in: bank)
                transfers += 1
            }
        }
        commits += 1
        if commits % 200 == 0 { say("progress \(commits)") }
    }
    say("transfers \(transfers) commits \(commits)")
}

/// Reads every balance in one snapshot, again and again, verifying the total, until stdin says
/// "stop". Prints "violation ..." for any snapshot whose sum is wrong and "checks N violations V".
/// Arguments: STORE ACCOUNTS TOTAL.
func bankReader(path: String, arguments: [String]) throws {
    let accounts = Int(arguments[2]) ?? 500
    let total = Int64(arguments[3]) ?? Int64(accounts) * 1000
    var db = try Database(path: path, mode: .readOnly)
    let stop = StopFlag()
    Thread.detachNewThread {
        while let line = readLine(), line != "stop" {}
        stop.set()
    }
    say("ready")
    var checks = 0, violations = 0, round = 0
    var generations = Set<UInt64>()
    while !stop.isSet {
        round += 1
        try db.read { tx in
            guard let bank = try tx.treeIfPresent("bank") else { return }
            var sum: Int64 = 0, seen = 0
            // Alternate the three ways of reading a snapshot: scan, reverse cursor, point gets.
            switch round % 3 {
            case 0:
                try tx.scan(bank) { _, value in
                    sum += decodeBalance(value) ?? Int64.min / 4
                    seen += 1
                    return true
                }
            case 1:
                let cursor = try tx.cursor(bank)
                var more = try cursor.last()
                while more {
                    sum += decodeBalance(try cursor.value()) ?? Int64.min / 4
                    seen += 1
                    more = try cursor.previous()
                }
            default:
                for i in 0..<accounts {
                    if let value = try tx.get(accountKey(i), in: bank) {
                        sum += decodeBalance(value) ?? Int64.min / 4
                        seen += 1
                    }
                }
            }
            checks += 1
            generations.insert(tx.generation)
            if sum != total || seen != accounts {
                violations += 1
                say("violation generation \(tx.generation) sum \(sum) accounts \(seen)")
            }
        }
        // Now and then a reader reopens, as a restarted process would.
        if round % 500 == 0 { db = try Database(path: path, mode: .readOnly) }
    }
    say("checks \(checks) violations \(violations) generations \(generations.count)")
}

final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    func set() { lock.withLock { stopped = true } }
    var isSet: Bool { lock.withLock { stopped } }
}
