// entities: the entity-store workloads (issue #12), engine neutral. 100,000 entities of type
// "item" with 5 properties each (name, age, score, active, tag), run through `EntityBenchStore`,
// which each engine implements natively: StrataEntities' EntityStore on Strata, and on SQLite what
// a user writes by hand (an `entities` table and a `properties(entity, key, value, type,
// datestamp)` table indexed on (entity, key, datestamp) and (key, value), hand-bound statements).
//
// Workloads: entities-create (transactions of 1,000; unsynced, and fully durable),
// entities-update (100,000 property sets, transactions of 100), entities-read (current values of
// 3 properties of 100,000 random entities, 1,000 per read transaction), entities-history (the
// full history of one property of 10,000 entities that have 10 entries each, 1,000 per read
// transaction), entities-resolve (10,000 get-or-create by name, half existing, transactions of
// 100). The data and every random choice are the same for every engine; data is generated before
// each clock starts.
import Foundation
import Glibc

/// A property value of the benchmark's entities.
public enum BenchValue: Equatable, Sendable {
    case int(Int)
    case double(Double)
    case string(String)
    case bool(Bool)
}

public struct BenchEntity: Sendable {
    public var id: UUID
    public var properties: [(key: String, value: BenchValue)]

    /// Entity number `i` of the workload's data set.
    public static func numbered(_ i: Int) -> BenchEntity {
        var mix = SplitMix64(seed: UInt64(i) &* 0x9E37_79B9_7F4A_7C15 &+ 12)
        let a = mix.next(), b = mix.next()
        let id = UUID(uuid: withUnsafeBytes(of: (a, b)) { raw in
            (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15])
        })
        return BenchEntity(id: id, properties: [("name", .string(name(i))), ("age", .int(i % 100)), ("score", .double(Double(i) / 7)),
                                                ("active", .bool(i % 2 == 0)), ("tag", .string("tag\(i % 50)"))])
    }

    public static func name(_ i: Int) -> String { "Entity \(i)" }
}

/// One property change of the update and history workloads.
public struct BenchSet: Sendable {
    public var id: UUID
    public var key: String
    public var value: BenchValue
    /// Seconds since 2001-01-01.
    public var datestamp: Double
}

/// The entity workloads' operations, as an engine does them natively; each call is one transaction.
public protocol EntityBenchStore: AnyObject {
    /// Creates the entities (type "item", their properties at `datestamp`).
    func create(_ entities: ArraySlice<BenchEntity>, datestamp: Double) throws
    /// Appends one entry per change.
    func set(_ changes: ArraySlice<BenchSet>) throws
    /// The current values of `keys` of each entity (one read transaction); returns how many values were found.
    func read(_ ids: ArraySlice<UUID>, keys: [String]) throws -> Int
    /// The full history of `key` of each entity (one read transaction); returns the number of entries.
    func history(_ ids: ArraySlice<UUID>, key: String) throws -> Int
    /// Get-or-create of entities of type "item" by their current "name" (one transaction);
    /// returns how many were created.
    func resolve(names: ArraySlice<String>, datestamp: Double) throws -> Int
    func close()
}

/// Opens (creating if missing) the store at `path`, a directory the engine owns.
public typealias EntityBenchOpener = (_ path: String, _ durability: BookDurability) throws -> any EntityBenchStore

public struct EntityWorkload {
    public let engine: String
    public let records: Int
    public let directory: String
    public let open: EntityBenchOpener

    private func report(_ workload: String, ops: Int, seconds: WorkloadTiming, _ extra: String = "") {
        reportWorkload(engine: engine, workload: workload, records: records, ops: ops, seconds: seconds.wall,
                       extra: seconds.cpuFields(ops: ops) + extra)
    }

    private func timed(_ body: () throws -> Void) rethrows -> WorkloadTiming { try WorkloadTiming.measure(body) }

    private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { Sys.fatal("entities (\(engine)): \(message())") }
    }

    public func run() throws {
        var mix = SplitMix64(seed: 12)
        let all = (0..<records).map(BenchEntity.numbered)
        let base = 800_000_000.0
        func createAll(in store: any EntityBenchStore) throws {
            for start in stride(from: 0, to: records, by: 1000) { try store.create(all[start..<min(records, start + 1000)], datestamp: base) }
        }

        let durable = try open(directory + "/entities-durable", .full)
        let createDurable = try timed { try createAll(in: durable) }
        report("entities-create-durable", ops: records, seconds: createDurable, ",\"batch\":1000,\"durability\":\"full\"")
        durable.close()

        let store = try open(directory + "/entities", .unsynced)
        let create = try timed { try createAll(in: store) }
        report("entities-create", ops: records, seconds: create, ",\"batch\":1000,\"durability\":\"none\"")

        let updates = (0..<100_000).map { n in
            BenchSet(id: all[Int(mix.next() % UInt64(records))].id, key: "age", value: .int(n), datestamp: base + 1 + Double(n))
        }
        let update = try timed { for start in stride(from: 0, to: updates.count, by: 100) { try store.set(updates[start..<start + 100]) } }
        report("entities-update", ops: updates.count, seconds: update, ",\"batch\":100,\"durability\":\"none\"")

        let readIDs = (0..<100_000).map { _ in all[Int(mix.next() % UInt64(records))].id }
        var values = 0
        let read = try timed {
            for start in stride(from: 0, to: readIDs.count, by: 1000) { values += try store.read(readIDs[start..<start + 1000], keys: ["name", "age", "score"]) }
        }
        check(values == readIDs.count * 3, "read \(values) values of \(readIDs.count * 3)")
        report("entities-read", ops: readIDs.count, seconds: read, ",\"properties\":3,\"batch\":1000")

        // History: 10 entries of "level" for each of 10,000 entities (set up untimed).
        let historyCount = min(10_000, records)
        let historyIDs = all.prefix(historyCount).map(\.id)
        for round in 0..<10 {
            let changes = historyIDs.map { BenchSet(id: $0, key: "level", value: .int(round), datestamp: base + 200_000 + Double(round)) }
            for start in stride(from: 0, to: changes.count, by: 1000) { try store.set(changes[start..<min(changes.count, start + 1000)]) }
        }
        var entries = 0
        let history = try timed {
            for start in stride(from: 0, to: historyIDs.count, by: 1000) {
                entries += try store.history(historyIDs[start..<min(historyIDs.count, start + 1000)], key: "level")
            }
        }
        check(entries == historyCount * 10, "read \(entries) history entries of \(historyCount * 10)")
        report("entities-history", ops: historyCount, seconds: history, ",\"entries\":\(entries),\"batch\":1000")

        // Resolve: half the names exist, half are new; shuffled the same way for every engine.
        var names = (0..<5000).map { _ in BenchEntity.name(Int(mix.next() % UInt64(records))) } + (0..<5000).map { "New \($0)" }
        for i in stride(from: names.count - 1, to: 0, by: -1) { names.swapAt(i, Int(mix.next() % UInt64(i + 1))) }
        var created = 0
        let resolve = try timed {
            for start in stride(from: 0, to: names.count, by: 100) { created += try store.resolve(names: names[start..<start + 100], datestamp: base + 300_000) }
        }
        check(created == 5000, "created \(created) entities, expected 5000")
        report("entities-resolve", ops: names.count, seconds: resolve, ",\"batch\":100")
        store.close()
    }

    /// The `entities` part of a benchmark executable's command line: runs the entity workloads
    /// on each engine that `--engine` selects (all when absent) if `entities` is named, and
    /// removes `entities` and `--entity-records N` from `arguments`. Returns whether the
    /// executable should stop there (no other workload was asked for).
    public static func runIfAsked(arguments: inout [String], engines: [(name: String, open: EntityBenchOpener)]) -> Bool {
        guard arguments.contains("entities") else { return false }
        var records = 100_000
        if let flag = arguments.firstIndex(of: "--entity-records"), flag + 1 < arguments.count, let value = Int(arguments[flag + 1]) {
            records = value
            arguments.removeSubrange(flag...flag + 1)
        }
        arguments.removeAll { $0 == "entities" }
        let chosen = arguments.lastIndex(of: "--engine").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        for (name, open) in engines where chosen == nil || chosen == name {
            let directory = Sys.makeTempDirectory(prefix: "entities-\(name)")
            do { try EntityWorkload(engine: name, records: records, directory: directory, open: open).run() } catch {
                Sys.fatal("entities (\(name)): \(error)")
            }
            Sys.removeTree(directory)
        }
        return !arguments.contains { allWorkloads.contains($0) || $0 == "typed" }
    }
}
