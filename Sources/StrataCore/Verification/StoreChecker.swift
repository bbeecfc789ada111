/// What `Database.check()` found.
public struct CheckReport: Sendable {
    /// One named tree of the checked snapshot and its catalog record.
    public struct TreeSummary: Sendable, Equatable {
        /// The tree's name in the catalog.
        public let name: String
        /// The tree's record as the catalog stores it (root, depth, entry and page counts).
        public let record: TreeRecord
    }

    /// The generation (transaction id) of the snapshot that was checked.
    public var generation: UInt64 = 0
    /// The store's page size in bytes.
    public var pageSize = 0
    /// Pages in the file up to the snapshot's high-water mark, meta pages included.
    public var pageCount: UInt64 = 0
    /// Pages reached from a tree: the named trees, the catalog and the free-page tree.
    public var treePages: UInt64 = 0
    /// Pages listed as free (in the free-page tree or carried by the meta).
    public var freePages: UInt64 = 0
    /// The meta pages at the start of the file (they belong to no tree and are never free).
    public var metaPages: UInt64 { PageLayout.metaPageCount }
    /// The named trees of the catalog whose records could be read, in catalog order.
    public var trees: [TreeSummary] = []
    /// The entries of all named trees as their records state them; `UInt64.max` if damaged
    /// records add up to more (the check reports which records disagree with their trees).
    public var entryCount: UInt64 { trees.saturatingSum { $0.record.entries } }
    /// The pages of all named trees as their records state them (branch, leaf and overflow);
    /// `UInt64.max` if damaged records add up to more.
    public var namedTreePages: UInt64 {
        trees.saturatingSum { [$0.record.branchPages, $0.record.leafPages, $0.record.overflowPages].saturatingSum { $0 } }
    }
    /// Human-readable descriptions of everything wrong; empty when the store is clean.
    public var problems: [String] = []
    /// True when the check found no problem.
    public var isClean: Bool { problems.isEmpty }
}

/// Verifies every page reachable from one snapshot: page checksums and headers, key order inside
/// pages and against the parents' separators, uniform depth, entry and page counts against the
/// tree records, overflow runs, and free-space accounting: every page below the high-water mark is
/// either in exactly one tree or listed exactly once as free.
struct StoreChecker {
    private let transaction: ReadTransaction
    private let access: PageAccess
    private var owner: [UInt8]
    private var report = CheckReport()
    private let progress: ((UInt64, UInt64) -> Void)?
    private var visited: UInt64 = 0
    private static let maximumProblems = 200

    private static let unowned: UInt8 = 0, used: UInt8 = 1, free: UInt8 = 2

    init(transaction: ReadTransaction, progress: ((UInt64, UInt64) -> Void)?) {
        self.transaction = transaction
        access = transaction.access
        owner = [UInt8](repeating: StoreChecker.unowned, count: Int(access.committedPageCount))
        self.progress = progress
    }

    mutating func run() throws -> CheckReport {
        report.generation = transaction.generation
        report.pageSize = access.pageSize
        report.pageCount = access.committedPageCount
        try walkTree(name: "(catalog)", record: transaction.catalog)
        let names: [String]
        do { names = try transaction.treeNames() } catch {
            problem("catalog: \(error)")
            names = []
        }
        for name in names {
            do {
                let record = try transaction.record(of: try transaction.tree(name))
                report.trees.append(.init(name: name, record: record))
                try walkTree(name: name, record: record)
            } catch let error as StrataError {
                problem("tree '\(name)': \(error)")
            }
        }
        let freeTree = transaction.freeTree
        try walkTree(name: "(free pages)", record: freeTree)
        try accountFreePages(freeTree)
        for group in try transaction.carriedFree().groups {
            for page in group.pages { _ = claim(page, as: StoreChecker.free, context: "carried free pages (freed by \(group.freedBy))") }
        }
        var lost: [UInt64] = []
        for page in Int(PageLayout.metaPageCount)..<owner.count where owner[page] == StoreChecker.unowned {
            lost.append(UInt64(page))
        }
        if !lost.isEmpty {
            problem("\(lost.count) page(s) neither in a tree nor free (lost), first: \(lost.prefix(8).map(String.init).joined(separator: ", "))")
        }
        report.treePages = UInt64(owner.filter { $0 == StoreChecker.used }.count)
        report.freePages = UInt64(owner.filter { $0 == StoreChecker.free }.count)
        return report
    }

    private mutating func problem(_ text: String) {
        if report.problems.count < StoreChecker.maximumProblems { report.problems.append(text) }
    }

    private mutating func claim(_ page: UInt64, as kind: UInt8, context: String) -> Bool {
        guard page >= PageLayout.metaPageCount, page < UInt64(owner.count) else {
            problem("\(context): page \(page) is outside the file (2..<\(owner.count))")
            return false
        }
        let index = Int(page)
        if owner[index] != StoreChecker.unowned {
            let first = owner[index] == StoreChecker.used ? "used" : "free"
            let second = kind == StoreChecker.used ? "used" : "free"
            problem("\(context): page \(page) is \(first) and \(second) again")
            return false
        }
        owner[index] = kind
        visited += 1
        if visited % 4096 == 0 { progress?(visited, UInt64(owner.count)) }
        return true
    }

    private struct Counts { var entries: UInt64 = 0, branch: UInt64 = 0, leaf: UInt64 = 0, overflow: UInt64 = 0 }

    private mutating func walkTree(name: String, record: TreeRecord) throws {
        guard record.root != 0 else {
            if record.entries != 0 { problem("tree '\(name)' is empty but records \(record.entries) entries") }
            return
        }
        var counts = Counts()
        walk(record.root, level: 1, depth: record.depth, lower: nil, upper: nil, tree: name, counts: &counts)
        if counts.entries != record.entries { problem("tree '\(name)' has \(counts.entries) entries, its record says \(record.entries)") }
        if counts.leaf != record.leafPages || counts.branch != record.branchPages || counts.overflow != record.overflowPages {
            problem("tree '\(name)' page counts (branch \(counts.branch), leaf \(counts.leaf), overflow \(counts.overflow)) differ from its record (\(record.branchPages), \(record.leafPages), \(record.overflowPages))")
        }
    }

    private mutating func walk(_ number: UInt64, level: Int, depth: Int, lower: [UInt8]?, upper: [UInt8]?, tree: String, counts: inout Counts) {
        let context = "tree '\(tree)'"
        guard claim(number, as: StoreChecker.used, context: context) else { return }
        let base = access.base + Int(number) * access.pageSize
        if !Page.Header(base).checksumMatches(pageCount: 1, pageSize: access.pageSize, checksum: access.pageChecksum) {
            problem("\(context): page \(number) fails its checksum")
            return
        }
        let page: Page
        do { page = try Page(validating: base, size: access.pageSize, number: number) } catch {
            problem("\(context): \(error)")
            return
        }
        if page.transactionID > transaction.generation {
            problem("\(context): page \(number) was written by transaction \(page.transactionID), after the snapshot \(transaction.generation)")
        }
        do {
            if page.isLeaf {
                guard level == depth else { return problem("\(context): leaf \(number) at level \(level) of depth \(depth)") }
                guard page.count > 0 else { return problem("\(context): leaf \(number) is empty") }
                counts.leaf += 1
                var previous: UnsafeRawBufferPointer?
                for index in 0..<page.count {
                    let node = try page.leaf(index)
                    if let previous, compareKeys(previous, node.key) >= 0 { problem("\(context): keys out of order in leaf \(number)") }
                    if let lower, lower.withUnsafeBytes({ compareKeys(node.key, $0) }) < 0 { problem("\(context): leaf \(number) key below its parent's bound") }
                    if let upper, upper.withUnsafeBytes({ compareKeys(node.key, $0) }) >= 0 { problem("\(context): leaf \(number) key above its parent's bound") }
                    previous = node.key
                    counts.entries += 1
                    if node.isOverflow { checkOverflow(node, context: context, counts: &counts) }
                }
            } else {
                guard level < depth else { return problem("\(context): branch \(number) at level \(level) of depth \(depth)") }
                counts.branch += 1
                var keys: [[UInt8]] = []
                for index in 0..<page.count { keys.append(index == 0 ? [] : Array(try page.branchKey(index))) }
                for index in 1..<max(1, keys.count) where index > 1 && !keys[index - 1].lexicographicallyPrecedes(keys[index]) {
                    problem("\(context): separators out of order in branch \(number)")
                }
                for index in 0..<page.count {
                    let childLower = index == 0 ? lower : keys[index]
                    let childUpper = index + 1 < keys.count ? keys[index + 1] : upper
                    walk(try page.child(index), level: level + 1, depth: depth, lower: childLower, upper: childUpper, tree: tree, counts: &counts)
                }
            }
        } catch {
            problem("\(context): \(error)")
        }
    }

    private mutating func checkOverflow(_ node: Page.LeafNode, context: String, counts: inout Counts) {
        let first = node.overflowPage
        let pages = Page.overflowPageCount(valueLength: node.valueLength, pageSize: access.pageSize)
        guard first >= PageLayout.metaPageCount, first < access.committedPageCount,
              UInt64(pages) <= access.committedPageCount - first else {
            return problem("\(context): overflow run at \(first) (\(pages) pages) is outside the file")
        }
        for page in first..<first + UInt64(pages) { _ = claim(page, as: StoreChecker.used, context: context) }
        counts.overflow += UInt64(pages)
        let base = access.base + Int(first) * access.pageSize
        if !Page.Header(base).checksumMatches(pageCount: pages, pageSize: access.pageSize, checksum: access.pageChecksum) {
            problem("\(context): overflow run at \(first) fails its checksum")
        }
        do { _ = try access.overflowValue(first, length: node.valueLength) } catch { problem("\(context): \(error)") }
    }

    private mutating func accountFreePages(_ freeTree: TreeRecord) throws {
        let cursor = Cursor(access: access, record: freeTree)
        var more: Bool
        do { more = try cursor.first() } catch { return problem("free tree: \(error)") }
        while more {
            do {
                let value = try cursor.value()
                let wellFormed = try cursor.key().withUnsafeBytes { FreeRecordKey.isWellFormed($0) }
                if value.count % 8 != 0 || !wellFormed {
                    problem("free tree: malformed record")
                } else {
                    value.withUnsafeBytes { raw in
                        for index in 0..<(raw.count / 8) {
                            _ = claim(raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self), as: StoreChecker.free, context: "free list")
                        }
                    }
                }
                more = try cursor.next()
            } catch {
                return problem("free tree: \(error)")
            }
        }
    }
}

extension Database {
    /// Verifies the latest committed snapshot (see `StoreChecker`). Throws only if the snapshot
    /// cannot be read at all; everything else is reported in `problems`.
    public func check(progress: ((UInt64, UInt64) -> Void)? = nil) throws -> CheckReport {
        try read { transaction in
            var checker = StoreChecker(transaction: transaction, progress: progress)
            return try checker.run()
        }
    }
}
