// Typed-layer workloads (Strata only; the peers' typed figures are in the README, measured with
// the same data shape): a Book with an index on title and a unique index on isbn.
import Foundation
import Strata
import StrataCore

struct BenchBook: Codable, Identifiable, Sendable {
    var id: UUID
    var title: String
    var author: String
    var isbn: String
    var pages: Int
    var published: Date
}

struct BenchBookFormat: DatastoreFormat {
    static let name = "books"
    enum Version: Int, DatastoreVersion { case v1 = 1 }
    static let currentVersion = Version.v1
    typealias Instance = BenchBook
    typealias Identifier = UUID
    let title = Index(\.title)
    let isbn = OneToOneIndex(\.isbn)
}

/// Deterministic data: book i has title "Title <i, 7 digits>" (so a range of 100 titles holds
/// 100 books), isbn "978-<i>", and a UUID drawn from SplitMix64.
struct TypedBench {
    let records: Int
    let directory: String
    var results: [String] = []

    private struct Mix {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func book(_ i: Int) -> BenchBook {
        var mix = Mix(state: UInt64(i) &* 0x2545_F491_4F6C_DD1D)
        let a = mix.next(), b = mix.next()
        let id = UUID(uuid: withUnsafeBytes(of: (a, b)) { raw in
            (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15])
        })
        return BenchBook(id: id, title: String(format: "Title %07d", i), author: "Author \(i % 997)", isbn: "978-\(i)",
                         pages: 100 + i % 900, published: Date(timeIntervalSince1970: Double(i) * 3600))
    }

    private mutating func report(_ workload: String, ops: Int, seconds: Double, _ extra: String = "") {
        let line = "{\"engine\":\"strata\",\"workload\":\"\(workload)\",\"records\":\(records),\"ops\":\(ops),\"seconds\":\(String(format: "%.6f", seconds)),\"ops_per_sec\":\(String(format: "%.3f", Double(ops) / seconds))\(extra)}"
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
        results.append(line)
    }

    private func time(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    mutating func run() throws {
        let store = try Store(at: directory + "/typed.strata")
        let books = try store.datastore(BenchBookFormat.self)
        var mix = Mix(state: 7)

        // Data is generated before the clock starts: only the store's work is timed.
        let all = (0..<records).map(TypedBench.book)
        // The same inserts without syncs: GRDB's default (WAL, synchronous=NORMAL) does not sync
        // per commit either.
        var unsynced = DatabaseOptions()
        unsynced.durability = .none
        let scratch = try Store(at: directory + "/typed-nosync.strata", options: unsynced)
        let scratchBooks = try scratch.datastore(BenchBookFormat.self)
        let insertUnsynced = try time {
            for batch in stride(from: 0, to: records, by: 1000) {
                try scratch.write { tx in
                    for i in batch..<min(records, batch + 1000) { try tx[scratchBooks].persist(all[i]) }
                }
            }
        }
        report("typed-insert-nosync", ops: records, seconds: insertUnsynced, ",\"batch\":1000,\"durability\":\"none\"")
        scratch.database.close()

        let insert = try time {
            for batch in stride(from: 0, to: records, by: 1000) {
                try store.write { tx in
                    for i in batch..<min(records, batch + 1000) { try tx[books].persist(all[i]) }
                }
            }
        }
        report("typed-insert", ops: records, seconds: insert, ",\"batch\":1000,\"durability\":\"full\"")

        let loads = 100_000
        let ids = (0..<loads).map { _ in all[Int(mix.next() % UInt64(records))].id }
        let loadTime = try time { for id in ids { guard try books.load(id) != nil else { fatalError("missing book") } } }
        report("typed-load-id", ops: loads, seconds: loadTime)

        // The raw engine's get on the same keys, one read transaction each, for comparison.
        let database = store.database
        let rawTime = try time {
            for id in ids {
                let found = try database.read { tx in try tx.get(id.orderedKeyBytes, in: tx.tree("books")) != nil }
                guard found else { fatalError("missing key") }
            }
        }
        report("typed-raw-get", ops: loads, seconds: rawTime)

        let ranges = 1000
        var rows = 0
        let starts = (0..<ranges).map { _ in Int(mix.next() % UInt64(max(1, records - 100))) }
        let bounds = starts.map { (all[$0].title, all[min(records - 1, $0 + 100)].title) }
        let rangeTime = try time {
            for (lower, upper) in bounds { rows += try books.load(lower..<upper, from: \.title).count }
        }
        report("typed-title-range", ops: ranges, seconds: rangeTime, ",\"rows\":\(rows)")

        let isbns = (0..<loads).map { _ in all[Int(mix.next() % UInt64(records))].isbn }
        let isbnTime = try time {
            for isbn in isbns { guard try books.load(isbn, from: \.isbn) != nil else { fatalError("missing isbn") } }
        }
        report("typed-isbn", ops: loads, seconds: isbnTime)
        store.database.close()

        for durability in [Durability.none, .full] {
            var options = DatabaseOptions()
            options.durability = durability
            let updates = durability == .none ? 10_000 : 2_000
            let updater = try Store(at: directory + "/typed.strata", options: options)
            let datastore = try updater.datastore(BenchBookFormat.self)
            let changed = (0..<updates).map { n in
                var book = all[Int(mix.next() % UInt64(records))]
                book.pages = n
                return book
            }
            let updateTime = try time { for book in changed { try datastore.persist(book) } }
            report(durability == .none ? "typed-update-nosync" : "typed-update-durable", ops: updates, seconds: updateTime)
            updater.database.close()
        }
    }
}
