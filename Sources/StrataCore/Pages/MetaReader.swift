import Glibc

/// Choosing the meta a store opens at (with `pread`, before anything is mapped).
///
/// A meta is accepted only if it decodes (checksums, bounds) and every page it names reached the
/// file intact: right page number, written by the meta's transaction, valid checksum, inside the
/// file (see `Database.persist` for why one flush per commit needs this). The newest accepted meta
/// wins; a newer one that fails is the commit a crash or power loss cut short, and the store opens
/// at the one before it, whose pages that commit never touched. Verifying costs at most one
/// commit's pages (`MetaPage.verifiedPageLimit`, 2 MiB), twice when the newest one fails.
enum MetaReader {
    /// The chosen meta, and the meta slot (if any) that holds something other than an older valid
    /// meta: a commit that was rejected, or bytes that do not decode. The writer wipes that slot
    /// before it commits (see `WriterRecovery`).
    struct Choice {
        var meta: MetaPage
        var staleSlot: UInt64?
        /// A newer meta that decoded but named pages that were not all intact: the commit the
        /// store did not open at, reported to the user (`Database.skippedCommit`).
        var skipped: SkippedCommit?
    }

    /// The bytes of both meta pages (the first two pages of the file, or what the file holds of
    /// them). Only a writer changes them; while they read the same, a choice made earlier still
    /// stands: the pages the chosen meta names are live and never rewritten, and a rejected newer
    /// meta stays rejected (another attempt at its transaction has another page digest, and the
    /// writer that makes it first wipes that meta's slot).
    static func metaPages(of file: PosixFile, pageSize: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 2 * pageSize)
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: $0.count, at: 0) }
        return Array(bytes.prefix(count))
    }

    static func newestMeta(of file: PosixFile, storePath: String, verifying: Bool = true) throws -> MetaPage {
        try choose(in: file, storePath: storePath, verifying: verifying).meta
    }

    /// Without `verifying`, the newest meta that decodes (what a process that joins a store a live
    /// writer keeps publishing needs: the page size; that writer may be reusing the pages an older
    /// meta names while they are read, so their verification means nothing then).
    static func choose(in file: PosixFile, storePath: String, verifying: Bool = true) throws -> Choice {
        let size = try file.size()
        guard size > 0 else { throw StrataError.notAStore(path: storePath, reason: "the data file is empty") }
        var candidates: [(slot: UInt64, meta: MetaPage, problem: String?)] = []
        var failures: [MetaPage.DecodeFailure] = []
        var pageSizes = [PageLayout.minimumPageSize, 8192, 16384, PageLayout.maximumPageSize]
        switch try readMeta(file, offset: 0, slot: 0) {
        case .success(let read):
            candidates.append((0, read.meta, read.problem))
            pageSizes = [read.meta.pageSize]
        case .failure(let failure):
            failures.append(failure)
        }
        // Meta 1 sits one page in; if meta 0 is unreadable, try every legal page size.
        for pageSize in pageSizes where UInt64(pageSize + MetaPage.encodedSize) <= size {
            switch try readMeta(file, offset: UInt64(pageSize), slot: 1) {
            case .success(let read) where read.meta.pageSize == pageSize:
                candidates.append((1, read.meta, read.problem))
            case .success:
                failures.append(.invalid("meta 1 page size disagrees"))
            case .failure(let failure):
                failures.append(failure)
            }
            if candidates.contains(where: { $0.slot == 1 }) { break }
        }
        for case .unsupportedVersion(let version) in failures where version > PageLayout.formatVersion {
            // A newer Strata committed here: its meta must not be overlooked in favour of an older one.
            throw StrataError.unsupportedFormat(path: storePath, found: version, supported: PageLayout.formatVersion)
        }
        if candidates.count == 2, candidates[0].meta.pageSize != candidates[1].meta.pageSize {
            throw StrataError.corruptMeta(path: storePath, reason: "the two metas disagree on the page size")
        }
        // A file's format never changes in place but from 1 to 2 (`PageLayout`; formats 3 and 4
        // side by side were written by a build that upgraded format 3 in place): metas naming
        // different page checksums cannot both belong to it.
        if candidates.count == 2, candidates[0].meta.pageChecksum != candidates[1].meta.pageChecksum {
            throw StrataError.corruptMeta(path: storePath, reason: "the two metas disagree on the format (versions \(candidates[0].meta.formatVersion) and \(candidates[1].meta.formatVersion))")
        }
        var rejected: [String] = []
        var skipped: SkippedCommit?
        let ordered = candidates.sorted { $0.meta.transactionID > $1.meta.transactionID }
        for (index, candidate) in ordered.enumerated() {
            // A file too short for the last candidate left is reported as truncated (`checkLength`).
            let isLast = index == ordered.count - 1
            // A meta whose fixed part verified but whose run list or carried pages did not is a
            // commit cut short (or rotted) like one whose pages did not all arrive: rejected and
            // reported, never dropped silently.
            if let problem = try candidate.problem ?? (verifying ? damage(of: candidate.meta, in: file, fileSize: size, checkingLength: !isLast) : nil) {
                rejected.append("generation \(candidate.meta.transactionID): \(problem)")
                if skipped == nil { skipped = SkippedCommit(generation: candidate.meta.transactionID, reason: problem) }
                continue
            }
            let chosen = candidate.meta
            let other = candidates.first { $0.slot != candidate.slot }?.meta
            let otherIsOlder = other.map { $0.transactionID < chosen.transactionID || ($0.transactionID == 0 && chosen.transactionID == 0) } ?? false
            return Choice(meta: chosen, staleSlot: otherIsOlder ? nil : 1 - candidate.slot, skipped: skipped)
        }
        for failure in failures {
            if case .unsupportedVersion(let version) = failure {
                throw StrataError.unsupportedFormat(path: storePath, found: version, supported: PageLayout.formatVersion)
            }
        }
        if rejected.isEmpty, failures.allSatisfy({ $0 == .notAStore }) {
            throw StrataError.notAStore(path: storePath, reason: "the data file does not start with a Strata header")
        }
        let reasons = failures.compactMap { failure -> String? in
            if case .invalid(let reason) = failure { return reason }
            return nil
        }
        throw StrataError.corruptMeta(path: storePath, reason: (reasons + rejected).joined(separator: "; "))
    }

    /// A meta read from its slot: `problem` is why its run list or carried free pages fail
    /// (`meta` is then its fixed part, which decoded and verified), nil if it decoded in full.
    private struct ReadMeta {
        var meta: MetaPage
        var problem: String?
    }

    /// Reads the fixed part of a meta and then, if it names pages or carries free pages, the rest.
    private static func readMeta(_ file: PosixFile, offset: UInt64, slot: UInt64) throws -> Result<ReadMeta, MetaPage.DecodeFailure> {
        var bytes = [UInt8](repeating: 0, count: MetaPage.encodedSize)
        let count = try bytes.withUnsafeMutableBytes { try file.read(into: $0.baseAddress!, count: MetaPage.encodedSize, at: offset) }
        guard count == MetaPage.encodedSize else { return .failure(.invalid("meta \(slot) is cut short")) }
        let decoded = bytes.withUnsafeBytes { MetaPage.decode($0, slot: slot) }
        let meta: MetaPage
        switch decoded {
        case .success(let fixed): meta = fixed
        case .failure(let failure): return .failure(failure)
        }
        let listBytes = bytes.withUnsafeBytes { MetaPage.runListByteCount($0, pageSize: meta.pageSize) }
        let carried = bytes.withUnsafeBytes { MetaPage.carriedBlock($0, pageSize: meta.pageSize) }
        let tailBytes = max(listBytes, carried.map { $0.offset + $0.count - MetaPage.encodedSize } ?? 0)
        if tailBytes > 0 {
            bytes += [UInt8](repeating: 0, count: tailBytes)
            let read = try bytes.withUnsafeMutableBytes {
                try file.read(into: $0.baseAddress! + MetaPage.encodedSize, count: tailBytes, at: offset + UInt64(MetaPage.encodedSize))
            }
            guard read == tailBytes else { return .success(ReadMeta(meta: meta, problem: "its meta's page list is cut short")) }
        }
        switch bytes.withUnsafeBytes({ raw in meta.decodingRuns(raw).flatMap { $0.decodingCarried(raw) } }) {
        case .success(let full):
            return .success(ReadMeta(meta: full))
        case .failure(.invalid(let reason)):
            return .success(ReadMeta(meta: meta, problem: reason))
        case .failure(let failure):
            return .failure(failure)
        }
    }

    /// Why `meta` cannot be trusted (nil if it can): the file is shorter than its pages (when
    /// `checkingLength`), or a page it names is not the one its commit wrote.
    static func damage(of meta: MetaPage, in file: PosixFile, fileSize: UInt64, checkingLength: Bool = true) throws -> String? {
        let pageSize = meta.pageSize
        if fileSize < meta.pageCount * UInt64(pageSize) {
            return checkingLength ? "the file holds \(fileSize) bytes, the meta names \(meta.pageCount) pages" : nil
        }
        guard let longest = meta.pageRuns.map(\.count).max() else { return nil }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Int(longest) * pageSize, alignment: 64)
        defer { buffer.deallocate() }
        var digest = MetaPage.digestStart(transactionID: meta.transactionID)
        for run in meta.pageRuns {
            let byteCount = Int(run.count) * pageSize
            guard try file.read(into: buffer, count: byteCount, at: run.first * UInt64(pageSize)) == byteCount else {
                return "pages \(run.first)..<\(run.first + run.count) are cut short"
            }
            var index = 0
            while index < Int(run.count) {
                let page = Page.Header(buffer + index * pageSize)
                let number = run.first + UInt64(index)
                guard page.number == number else {
                    return "page \(number) carries another page number"
                }
                guard page.transactionID == meta.transactionID else {
                    return "page \(number) was not written by transaction \(meta.transactionID)"
                }
                var span = 1
                switch page.kind {
                case .branch?, .leaf?: break
                case .overflow?:
                    span = page.overflowPageCount
                    guard span >= 1, index + span <= Int(run.count) else { return "overflow page \(number) claims \(span) pages" }
                default:
                    return "page \(number) has no tree page kind"
                }
                guard page.checksumMatches(pageCount: span, pageSize: pageSize, checksum: meta.pageChecksum) else {
                    return "page \(number) checksum mismatch"
                }
                digest = MetaPage.digest(folding: page.storedChecksum, into: digest)
                index += span
            }
        }
        // Every page is whole and stamped with this transaction; the digest says they are the
        // ones this meta's own attempt wrote, not an abandoned earlier attempt's.
        guard digest == meta.pageDigest else {
            return "its pages hold another attempt at transaction \(meta.transactionID) (page digest mismatch)"
        }
        return nil
    }

    static func checkLength(_ fileSize: UInt64, of meta: MetaPage, storePath: String) throws {
        let needed = meta.pageCount * UInt64(meta.pageSize)
        guard fileSize >= needed else {
            throw StrataError.truncatedFile(path: storePath + "/data", expectedBytes: needed, actualBytes: fileSize)
        }
    }
}
