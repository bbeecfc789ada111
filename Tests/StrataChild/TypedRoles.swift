// Child roles that use the typed layer (Strata) through the shared test formats.
import Foundation
import Strata
import StrataCore
import StrataTestFixtures

/// Runs a typed-layer role; returns false if `role` is not one of them.
func runTypedRole(_ role: String, _ arguments: [String]) async throws -> Bool {
    let path = arguments[1]
    switch role {
    case "typed-observe":
        // Loads and observes BookFormat in a read-only store until `count` events arrived.
        let count = Int(arguments[2]) ?? 1
        let store = try Store(at: path, mode: .readOnly)
        let books = try store.datastore(BookFormat.self)
        var events = books.changes().makeAsyncIterator()
        say("ready \(try books.count)")
        var seen = 0
        while seen < count, let event = try await events.next() {
            seen += 1
            switch event {
            case .created(_, let book): say("created \(book.title)")
            case .updated(_, let old, let new): say("updated \(old.title) -> \(new.title)")
            case .deleted(_, let old): say("deleted \(old.title)")
            }
        }
        let titles = try books.load(..., from: \.title).map(\.title)
        say("titles \(titles.joined(separator: ","))")
        return true
    case "typed-count":
        // Opens the store read-only, prints how many books it holds and exits.
        let store = try Store(at: path, mode: .readOnly)
        say("count \(try store.datastore(BookFormat.self).count)")
        return true
    case "typed-tick-stream":
        // Consumes every tick in order, slowly (yielding after each, pausing every 16,384), and
        // reports how far resident anonymous memory and VmHWM rose above their level once the
        // first batch had been decoded.
        let batchSize = Int(arguments[2]) ?? DatastoreStreamDefaults.batchSize
        let store = try Store(at: path, mode: .readOnly)
        let ticks = try store.datastore(TickFormat.self)
        var expected = 0
        var baseline: (anon: Int, hwm: Int)?
        var peakAnon = 0
        let start = Date()
        for try await tick in ticks.streamAll(batchSize: batchSize) {
            guard tick.id == expected, tick.value == tick.id &* 7 else { fail("tick \(tick.id) where \(expected) was due") }
            expected += 1
            if baseline == nil { baseline = (processStatus("RssAnon"), processStatus("VmHWM")) }
            if expected % 1024 == 0 { peakAnon = max(peakAnon, processStatus("RssAnon")) }
            if expected % 16_384 == 0 { try await Task.sleep(nanoseconds: 1_000_000) } else { await Task.yield() }
        }
        let base = baseline ?? (0, 0)
        let seconds = Date().timeIntervalSince(start)
        // The control: the same measurement sees 300,000 instances held at once.
        let before = processStatus("RssAnon")
        let held = try ticks.loadAll(limit: 300_000)
        let control = processStatus("RssAnon") - before
        say("streamed \(expected) anon+\(max(0, peakAnon - base.anon)) hwm+\(processStatus("VmHWM") - base.hwm) \(seconds) control+\(control) \(held.count)")
        return true
    default:
        return false
    }
}

/// A field of /proc/self/status in bytes (the kernel reports kB).
func processStatus(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }
    return 0
}
