import Foundation
import Testing
@_spi(Testing) @testable import StrataCore

/// A data file that writes through to the real file and remembers what a power loss could undo:
/// `durable` is the file as of the last completed sync, `pending` every write and resize since.
/// `crashImage` returns one thing the disk could hold after a power loss at this instant.
final class PowerLossIO: DataFileIO, @unchecked Sendable {
    // Only the writer calls in (under the store's writer lock), and the test reads the state from
    // the same thread between calls.
    enum Operation {
        case write(offset: Int, bytes: [UInt8])
        case resize(Int)
    }

    let inner: any DataFileIO
    private(set) var durable: [UInt8]
    private(set) var pending: [Operation] = []
    /// Called before every write, sync and resize (the test takes crash images there).
    var beforeCall: ((String) -> Void)?
    private(set) var syncs = 0

    static let sectorSize = 512

    init(inner: any DataFileIO) {
        self.inner = inner
        durable = FileManager.default.contents(atPath: inner.path).map { Array($0) } ?? []
    }

    var path: String { inner.path }

    func writeGathered(_ buffers: [UnsafeRawBufferPointer], at offset: UInt64) throws {
        beforeCall?("write")
        try inner.writeGathered(buffers, at: offset)
        var bytes: [UInt8] = []
        for buffer in buffers { bytes += buffer }
        pending.append(.write(offset: Int(offset), bytes: bytes))
    }

    func syncData() throws {
        beforeCall?("sync")
        try inner.syncData()
        syncs += 1
        flush()
    }

    func setSize(_ size: UInt64) throws {
        beforeCall?("resize")
        try inner.setSize(size)
        pending.append(.resize(Int(size)))
    }

    func size() throws -> UInt64 { try inner.size() }

    /// Everything pending reaches the disk (a completed sync, or the kernel's own writeback).
    func flush() {
        for operation in pending { PowerLossIO.apply(operation, to: &durable) }
        pending.removeAll()
    }

    private static func apply(_ operation: Operation, to image: inout [UInt8]) {
        switch operation {
        case .resize(let size):
            if size < image.count { image.removeSubrange(size...) } else { image += [UInt8](repeating: 0, count: size - image.count) }
        case .write(let offset, let bytes):
            applySectors(offset: offset, bytes: bytes, to: &image) { _ in true }
        }
    }

    /// Writes the 512-byte sectors of a write that `keep` selects (sector-aligned in the file).
    private static func applySectors(offset: Int, bytes: [UInt8], to image: inout [UInt8], keep: (Int) -> Bool) {
        var position = offset
        var index = 0
        while position < offset + bytes.count {
            let end = min(offset + bytes.count, (position / sectorSize + 1) * sectorSize)
            if keep(index) {
                if image.count < end { image += [UInt8](repeating: 0, count: end - image.count) }
                image.replaceSubrange(position..<end, with: bytes[(position - offset)..<(end - offset)])
            }
            position = end
            index += 1
        }
    }

    /// One possible disk after a power loss now: the durable file plus some of the pending
    /// operations, whole, torn at sector granularity, dropped or reordered.
    func crashImage(_ random: inout SeededGenerator) -> (bytes: [UInt8], how: String) {
        var image = durable
        let policy = Int.random(in: 0..<5, using: &random)
        switch policy {
        case 0:
            return (image, "all \(pending.count) pending lost")
        case 1:
            for operation in pending { PowerLossIO.apply(operation, to: &image) }
            return (image, "all \(pending.count) pending kept")
        case 2:
            // In order up to a point, the next one torn: a disk that does not reorder.
            let cut = Int.random(in: 0...pending.count, using: &random)
            for operation in pending.prefix(cut) { PowerLossIO.apply(operation, to: &image) }
            if cut < pending.count, case .write(let offset, let bytes) = pending[cut] {
                let sectors = Int.random(in: 0...(bytes.count / PowerLossIO.sectorSize), using: &random)
                PowerLossIO.applySectors(offset: offset, bytes: bytes, to: &image) { $0 < sectors }
            }
            return (image, "first \(cut) of \(pending.count) pending kept, next torn")
        case 3:
            // Whole operations, any subset: later writes may land while earlier ones do not.
            var kept = 0
            for operation in pending where Bool.random(using: &random) {
                PowerLossIO.apply(operation, to: &image)
                kept += 1
            }
            return (image, "\(kept) of \(pending.count) pending kept (reordered)")
        default:
            // Any subset of sectors of any write.
            for operation in pending {
                switch operation {
                case .resize:
                    if Bool.random(using: &random) { PowerLossIO.apply(operation, to: &image) }
                case .write(let offset, let bytes):
                    PowerLossIO.applySectors(offset: offset, bytes: bytes, to: &image) { _ in Bool.random(using: &random) }
                }
            }
            return (image, "random sectors of \(pending.count) pending")
        }
    }
}

/// Lets the `dataFileIO` closure hand the double it creates back to the test.
/// Power loss at random instants of a workload, simulated by `PowerLossIO`: each crash image is
/// written to its own store directory and opened there.
///
/// - `full`: every image opens at the last acknowledged commit (or the one in flight), checks clean
///   and holds exactly that commit's content. A commit's pages and meta are in one unsynced batch
///   (one sync per commit), so many images hold the new meta without all of its pages: those must
///   open at the previous commit (counted as "rejected").
/// - `none`: an image opens at some committed generation with exactly its content and a clean
///   check, or the damage is reported (typed error, or problems from `check()`). An image that opens
///   clean with content matching no commit is "silent" damage; the test counts and prints it.
///
/// `STRATA_POWERLOSS_COMMITS` sets the commits per mode (default 40; images are ~1.5 per commit).
@Suite(.serialized) struct PowerLossTests {
    struct Outcome {
        var images = 0
        var exact = 0
        /// Images holding the in-flight commit's meta that opened at the commit before it.
        var rejected = 0
        var lostAcknowledged = 0
        var detected = 0
        var silent = 0
        var syncsPerCommit = 0.0
        var notes: [String] = []
    }

    /// Runs the workload under `durability`, verifying every crash image as it is taken.
    func campaign(_ durability: Durability, commits: Int, seed: UInt64) throws -> Outcome {
        var random = SeededGenerator(seed: seed)
        var imageRandom = SeededGenerator(seed: seed ^ 0x5EED)
        let dir = TemporaryDirectory()
        let box = IOBox<PowerLossIO>()
        var options = DatabaseOptions()
        options.durability = durability
        options.pageSize = 4096
        box.install(in: &options) { PowerLossIO(inner: $0) }
        let db = try Database(path: dir.path, options: options)
        let io = try #require(box.io)
        var history: [UInt64: StoreContent] = [0: [:]]
        var acknowledged: UInt64 = 0
        var inFlight: (generation: UInt64, content: StoreContent)?
        var outcome = Outcome()
        let imageRoot = TemporaryDirectory("images")

        func verifyImage(_ bytes: [UInt8], how: String, instant: String) {
            outcome.images += 1
            let context = "\(durability) image \(outcome.images) at \(instant), \(how), acknowledged \(acknowledged) (seed \(seed))"
            let path = imageRoot.parent + "/image-\(outcome.images).strata"
            defer { try? FileManager.default.removeItem(atPath: path) }
            do {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                try Data(bytes).write(to: URL(fileURLWithPath: path + "/data"))
            } catch {
                Issue.record("\(context): cannot write the image: \(error)")
                return
            }
            do {
                var recoveryOptions = DatabaseOptions()
                recoveryOptions.durability = .none
                let recovered = try Database(path: path, options: recoveryOptions)
                let generation = recovered.generation
                let report = try recovered.check()
                let actual = try recovered.read { try content(of: $0) }
                let expected = generation == inFlight?.generation ? inFlight?.content : history[generation]
                let matches = expected == actual
                let lowest = durability == .none ? 0 : acknowledged
                if durability == .none {
                    if !report.isClean {
                        outcome.detected += 1
                    } else if !matches {
                        outcome.silent += 1
                        outcome.notes.append("\(context): opened clean at generation \(generation) with content of no commit")
                    } else {
                        outcome.exact += 1
                        if generation < acknowledged { outcome.lostAcknowledged += 1 }
                    }
                } else {
                    #expect(generation >= lowest && generation <= (inFlight?.generation ?? acknowledged),
                            "\(context): opened at generation \(generation)")
                    #expect(report.isClean, "\(context): \(report.problems.prefix(5))")
                    #expect(matches, "\(context): content of generation \(generation) differs from what was committed")
                    if generation < acknowledged { outcome.lostAcknowledged += 1 }
                    if report.isClean && matches { outcome.exact += 1 }
                    if let inFlight, generation < inFlight.generation, metaInImage(bytes, generation: inFlight.generation) {
                        outcome.rejected += 1
                    }
                }
                // The recovered store takes new commits.
                if report.isClean {
                    try recovered.write { tx in try tx.put("after", "power loss", in: try tx.openOrCreateTree("recovery")) }
                    let again = try recovered.check()
                    #expect(again.isClean, "\(context): after a commit on the recovered store: \(again.problems.prefix(5))")
                }
            } catch let error as StrataError {
                if durability == .none {
                    outcome.detected += 1
                } else {
                    Issue.record("\(context): \(error)")
                }
            } catch {
                Issue.record("\(context): untyped error \(error)")
            }
        }

        /// Whether the image's meta slot for `generation` holds that generation's meta.
        func metaInImage(_ bytes: [UInt8], generation: UInt64) -> Bool {
            let offset = Int(generation % 2) * 4096
            guard bytes.count >= offset + MetaPage.encodedSize else { return false }
            return bytes.withUnsafeBytes { raw in
                let copy = UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + MetaPage.encodedSize)])
                return (try? MetaPage.decode(copy, slot: generation % 2).get())?.transactionID == generation
            }
        }

        io.beforeCall = { call in
            guard Int.random(in: 0..<4, using: &random) == 0 else { return }
            let (bytes, how) = io.crashImage(&imageRandom)
            verifyImage(bytes, how: how, instant: "before \(call)")
        }

        var model: StoreContent = [:]
        for round in 0..<commits {
            var next = model
            let generation = acknowledged + 1
            try db.write { tx in
                let t = try tx.openOrCreateTree("t")
                var entries = next["t"] ?? [:]
                for _ in 0..<Int.random(in: 1...25, using: &random) {
                    let key = Array("key \(Int.random(in: 0..<400, using: &random))".utf8)
                    if Int.random(in: 0..<4, using: &random) == 0 {
                        try tx.delete(key, in: t)
                        entries[key] = nil
                    } else {
                        let length = Int.random(in: 0..<30, using: &random) == 0 ? Int.random(in: 5000...20000, using: &random) : Int.random(in: 1...200, using: &random)
                        let value = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ round) }
                        try tx.put(key, value, in: t)
                        entries[key] = value
                    }
                }
                next["t"] = entries
                // A second tree comes and goes.
                if round % 7 == 3 {
                    let u = try tx.openOrCreateTree("u")
                    for i in 0..<50 { try tx.put("u\(i)", "round \(round)", in: u) }
                    next["u"] = Dictionary(uniqueKeysWithValues: (0..<50).map { (Array("u\($0)".utf8), Array("round \(round)".utf8)) })
                } else if round % 7 == 5, let u = try tx.treeIfPresent("u") {
                    try tx.dropTree(u)
                    next["u"] = nil
                }
                inFlight = (generation, next)
            }
            // A transaction that changed nothing (it only deleted absent keys) commits nothing.
            #expect(db.generation == generation || (db.generation == acknowledged && next == model), "round \(round) (seed \(seed))")
            model = next
            history[db.generation] = model
            acknowledged = db.generation
            inFlight = nil
            if Int.random(in: 0..<3, using: &random) == 0 {
                let (bytes, how) = io.crashImage(&imageRandom)
                verifyImage(bytes, how: how, instant: "after commit \(generation)")
            }
            // Without syncs the kernel still writes dirty pages back, in its own time.
            if durability != .full, Int.random(in: 0..<4, using: &random) == 0 { io.flush() }
        }
        io.beforeCall = nil
        outcome.syncsPerCommit = Double(io.syncs) / Double(max(1, acknowledged))
        return outcome
    }

    static let commits = environmentCount("STRATA_POWERLOSS_COMMITS", default: 40)

    @Test func fullDurabilityLosesNoAcknowledgedCommit() throws {
        let seed = testSeed("powerLossFull")
        let outcome = try campaign(.full, commits: PowerLossTests.commits, seed: seed)
        print("[powerLossFull] \(outcome.images) power-loss images: \(outcome.exact) exact, \(outcome.lostAcknowledged) lost an acknowledged commit, \(outcome.rejected) held the new meta without all its pages and opened at the commit before, \(outcome.syncsPerCommit) syncs per commit")
        #expect(outcome.lostAcknowledged == 0)
        #expect(outcome.images > 10)
        // The workload's commits are small (at most 25 puts): one flush each.
        #expect(outcome.syncsPerCommit == 1)
    }

    @Test func noDurabilityOpensAtACommitOrReportsDamage() throws {
        let seed = testSeed("powerLossNone")
        let outcome = try campaign(.none, commits: PowerLossTests.commits, seed: seed)
        print("[powerLossNone] \(outcome.images) power-loss images: \(outcome.exact) exact (\(outcome.lostAcknowledged) at an older commit), \(outcome.detected) damage reported, \(outcome.silent) silent")
        for note in outcome.notes.prefix(5) { print("[powerLossNone] \(note)") }
        #expect(outcome.images > 10)
    }
}
