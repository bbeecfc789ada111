// typed: the typed-layer workload, engine neutral. A Book with an index on title and a unique
// index on isbn (the shape of issue #4's comparison), run through `BookStore`, which each engine
// implements natively: Strata's typed layer (Codable, declared indexes), SQLite with hand-bound
// prepared statements (the ceiling of what a SQLite wrapper such as GRDB can reach), LMDB with
// hand-written binary rows and two index databases (about what Empire generates with macros).
//
// The data and every random choice are the same for every engine: book i has title
// "Title <i, 7 digits>" (so a range of 100 titles holds 100 books), isbn "978-<i>", and a UUID
// drawn from SplitMix64; the loads, ranges and updates are drawn from one SplitMix64 stream in a
// fixed order. Data is generated before each clock starts: only the engine's work is timed.
import Foundation

public struct BenchBook: Codable, Identifiable, Sendable, Equatable {
    public var id: UUID
    public var title: String
    public var author: String
    public var isbn: String
    public var pages: Int
    public var published: Date

    public init(id: UUID, title: String, author: String, isbn: String, pages: Int, published: Date) {
        self.id = id
        self.title = title
        self.author = author
        self.isbn = isbn
        self.pages = pages
        self.published = published
    }

    /// Book number `i` of the workload's data set.
    public static func numbered(_ i: Int) -> BenchBook {
        var mix = SplitMix64(seed: UInt64(i) &* 0x2545_F491_4F6C_DD1D)
        let a = mix.next(), b = mix.next()
        let id = UUID(uuid: withUnsafeBytes(of: (a, b)) { raw in
            (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15])
        })
        let digits = String(i)
        let title = "Title " + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
        return BenchBook(id: id, title: title, author: "Author \(i % 997)", isbn: "978-\(i)",
                         pages: 100 + i % 900, published: Date(timeIntervalSince1970: Double(i) * 3600))
    }
}

public enum BookDurability: String, Sendable {
    /// No sync per commit (Strata `.none`, LMDB `MDB_NOSYNC`, SQLite WAL `synchronous=NORMAL`,
    /// GRDB's default): survives a process crash.
    case unsynced = "none"
    /// Every commit durable before it returns (Strata `.full`, LMDB default, SQLite `FULL`).
    case full
}

/// The typed workload's operations, as an engine does them natively. Each call is one
/// transaction; persisting keeps both indexes exact (a replaced book's old entries go).
public protocol BookStore: AnyObject {
    /// Inserts or replaces `books` in one transaction.
    func persist(_ books: ArraySlice<BenchBook>) throws
    /// Inserts or replaces one book in its own transaction.
    func update(_ book: BenchBook) throws
    func load(id: UUID) throws -> BenchBook?
    /// Whether `id` is stored, by the engine's point lookup alone (no decoding).
    func contains(id: UUID) throws -> Bool
    /// The books with `lower <= title < upper`, in title order.
    func load(titlesFrom lower: String, below upper: String) throws -> [BenchBook]
    func load(isbn: String) throws -> BenchBook?
    func close()
}

/// Opens (creating if missing) the store at `path`, which the engine owns (a directory).
public typealias BookStoreOpener = (_ path: String, _ durability: BookDurability) throws -> any BookStore

public struct TypedWorkload {
    public let engine: String
    public let records: Int
    public let directory: String
    public let open: BookStoreOpener

    public init(engine: String, records: Int, directory: String, open: @escaping BookStoreOpener) {
        self.engine = engine
        self.records = records
        self.directory = directory
        self.open = open
    }

    /// One result line, with the phase's CPU time beside its wall clock (`WorkloadTiming`).
    private func report(_ workload: String, ops: Int, seconds: WorkloadTiming, _ extra: String = "") {
        reportWorkload(engine: engine, workload: workload, records: records, ops: ops, seconds: seconds.wall,
                       extra: seconds.cpuFields(ops: ops) + extra)
    }

    private func time(_ body: () throws -> Void) rethrows -> WorkloadTiming { try WorkloadTiming.measure(body) }

    public func run() throws {
        var mix = SplitMix64(seed: 7)
        let all = (0..<records).map(BenchBook.numbered)
        func insertAll(into store: any BookStore) throws {
            for batch in stride(from: 0, to: records, by: 1000) { try store.persist(all[batch..<min(records, batch + 1000)]) }
        }

        let scratch = try open(directory + "/typed-nosync", .unsynced)
        let insertUnsynced = try time { try insertAll(into: scratch) }
        report("typed-insert-nosync", ops: records, seconds: insertUnsynced, ",\"batch\":1000,\"durability\":\"none\"")
        scratch.close()

        let store = try open(directory + "/typed", .full)
        let insert = try time { try insertAll(into: store) }
        report("typed-insert", ops: records, seconds: insert, ",\"batch\":1000,\"durability\":\"full\"")

        let loads = 100_000
        let ids = (0..<loads).map { _ in all[Int(mix.next() % UInt64(records))].id }
        let loadTime = try time { for id in ids { guard try store.load(id: id) != nil else { fatalError("missing book") } } }
        report("typed-load-id", ops: loads, seconds: loadTime)
        let rawTime = try time { for id in ids { guard try store.contains(id: id) else { fatalError("missing key") } } }
        report("typed-raw-get", ops: loads, seconds: rawTime)

        let ranges = 1000
        var rows = 0
        let starts = (0..<ranges).map { _ in Int(mix.next() % UInt64(max(1, records - 100))) }
        let bounds = starts.map { (all[$0].title, all[min(records - 1, $0 + 100)].title) }
        let rangeTime = try time {
            for (lower, upper) in bounds { rows += try store.load(titlesFrom: lower, below: upper).count }
        }
        report("typed-title-range", ops: ranges, seconds: rangeTime, ",\"rows\":\(rows)")

        let isbns = (0..<loads).map { _ in all[Int(mix.next() % UInt64(records))].isbn }
        let isbnTime = try time {
            for isbn in isbns { guard try store.load(isbn: isbn) != nil else { fatalError("missing isbn") } }
        }
        report("typed-isbn", ops: loads, seconds: isbnTime)
        store.close()

        for durability in [BookDurability.unsynced, .full] {
            let updates = durability == .unsynced ? 10_000 : 2_000
            let updater = try open(directory + "/typed", durability)
            let changed = (0..<updates).map { n in
                var book = all[Int(mix.next() % UInt64(records))]
                book.pages = n
                return book
            }
            let updateTime = try time { for book in changed { try updater.update(book) } }
            report(durability == .unsynced ? "typed-update-nosync" : "typed-update-durable", ops: updates, seconds: updateTime)
            updater.close()
        }
    }

    /// The `typed` part of a benchmark executable's command line: runs the typed workload on
    /// each engine that `--engine` selects (all when absent) if `typed` is named, or if no
    /// workload is named at all, and removes `typed` and `--typed-records N` from `arguments`.
    /// Returns whether the executable should stop there (only `typed` was asked for).
    public static func runIfAsked(arguments: inout [String], engines: [(name: String, open: BookStoreOpener)]) -> Bool {
        // Help is printed by the raw workloads' parser (which names `typed` and `entities` too).
        guard !arguments.contains("--role"), !arguments.contains("--help"), !arguments.contains("-h") else { return false }
        let wantsTyped = arguments.contains("typed")
        let namesWorkload = arguments.contains { allWorkloads.contains($0) }
        var records = 100_000
        if let flag = arguments.firstIndex(of: "--typed-records"), flag + 1 < arguments.count, let value = Int(arguments[flag + 1]) {
            records = value
            arguments.removeSubrange(flag...flag + 1)
        }
        arguments.removeAll { $0 == "typed" }
        guard wantsTyped || !namesWorkload else { return false }
        let chosen = arguments.lastIndex(of: "--engine").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
        for (name, open) in engines where chosen == nil || chosen == name {
            let directory = Sys.makeTempDirectory(prefix: "typed-\(name)")
            do { try TypedWorkload(engine: name, records: records, directory: directory, open: open).run() } catch {
                Sys.fatal("typed (\(name)): \(error)")
            }
            Sys.removeTree(directory)
        }
        return wantsTyped && !namesWorkload
    }
}
