import Testing
import StrataTestFixtures
@testable import StrataCore

/// The write transaction's page table against a `Dictionary` model: inserts, replacements and
/// removals over a small key range (long probe runs, wrap-around, removals inside runs, growth).
@Suite struct DirtyPagesTests {
    @Test func matchesADictionary() {
        var random = SeededGenerator(seed: testSeed("dirtyPages"))
        var table = DirtyPages()
        var model: [UInt64: PageBuffer] = [:]
        let buffers = (0..<8).map { PageBuffer(pageSize: 4096, number: UInt64($0)) }
        for step in 0..<200_000 {
            // Few distinct keys early (dense runs), a wider range later (growth).
            let range: UInt64 = step < 100_000 ? 96 : 5_000
            let key = UInt64.random(in: 2..<range, using: &random) * (Bool.random(using: &random) ? 1 : 1 << 20)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                let buffer = buffers[Int.random(in: 0..<buffers.count, using: &random)]
                table[key] = buffer
                model[key] = buffer
            case 4..<7:
                #expect(table.removeValue(forKey: key) === model.removeValue(forKey: key))
            default:
                #expect(table[key] === model[key])
            }
            if step % 10_000 == 0 || table.count != model.count {
                #expect(table.count == model.count)
                for (key, buffer) in model { #expect(table[key] === buffer) }
                #expect(table.values.count == model.count)
                if table.count != model.count { return }
            }
        }
        let sample = Array(model.keys.prefix(50))
        table.removeAll()
        #expect(table.isEmpty && table[2] == nil)
        #expect(sample.allSatisfy { table[$0] == nil })
        // Emptied in place: the table keeps working.
        for key in sample { table[key] = buffers[0] }
        #expect(table.count == sample.count && sample.allSatisfy { table[$0] === buffers[0] })
    }

    /// A read transaction's table is never written and has no storage: every query must still
    /// answer (nothing there), and its first insert must allocate and work.
    @Test func aTableNeverWrittenAnswersAndThenGrowsOnFirstInsert() {
        var table = DirtyPages()
        #expect(table.isEmpty && table.count == 0)
        #expect(table[2] == nil && table[.max] == nil)
        #expect(table.removeValue(forKey: 2) == nil)
        #expect(table.values.isEmpty)
        table.removeAll()
        var drained = 0
        table.drain { _ in drained += 1 }
        #expect(drained == 0)
        let buffer = PageBuffer(pageSize: 4096, number: 7)
        table[7] = buffer
        #expect(table.count == 1 && table[7] === buffer && table[8] == nil)
    }

    /// The table's empty marker (`UInt64.max`) is a page number a damaged leaf can name: looking
    /// it up or removing it must find nothing and leave the count alone (a miscounted table
    /// stops growing and then probes forever).
    @Test func theEmptyMarkerIsNeverAKey() {
        var table = DirtyPages()
        let buffer = PageBuffer(pageSize: 4096, number: 2)
        for page in UInt64(2)..<22 { table[page] = buffer }
        for _ in 0..<20 { #expect(table.removeValue(forKey: .max) == nil) }
        #expect(table[.max] == nil)
        #expect(table.count == 20)
        for page in UInt64(100)..<200 { table[page] = buffer }
        #expect(table.count == 120 && table[150] === buffer && table[5] === buffer)
    }

    /// A commit writes `valuesByNumber` in order and names its runs from it: every buffer once, in
    /// ascending page order, both for a small commit (sorted by insertion) and a large one.
    @Test func valuesByNumberAreEveryBufferInPageOrder() {
        var random = SeededGenerator(seed: testSeed("dirtyPagesByNumber"))
        for count in [0, 1, 2, 6, 31, 32, 33, 500] {
            var table = DirtyPages()
            var numbers = Set<UInt64>()
            while numbers.count < count { numbers.insert(UInt64.random(in: 2..<100_000, using: &random)) }
            for number in numbers { table[number] = PageBuffer(pageSize: 4096, number: number) }
            let ordered = table.valuesByNumber
            #expect(ordered.map(\.number) == numbers.sorted(), "\(count) pages")
            #expect(ordered.allSatisfy { table[$0.number] === $0 })
        }
    }

    /// The writer hands a finished transaction's emptied table to the next one (no allocation per
    /// transaction); a table that still holds pages or grew large is not kept.
    @Test func theWriterReusesOnlyEmptySmallTables() {
        let session = Database.WriterSession(committed: MetaPage.initial(pageSize: 4096), fileSize: 8192, durability: .full)
        var table = session.takeDirtyTable()
        #expect(table.capacity == 0)
        for page in UInt64(2)..<10 { table[page] = PageBuffer(pageSize: 4096, number: page) }
        let capacity = table.capacity
        session.keepDirtyTable(&table)
        #expect(table.capacity == capacity, "a table holding pages is not kept")
        table.removeAll()
        session.keepDirtyTable(&table)
        #expect(table.capacity == 0)
        var next = session.takeDirtyTable()
        #expect(next.capacity == capacity && next.isEmpty && next[2] == nil)
        #expect(session.takeDirtyTable().capacity == 0, "the spare is handed out once")
        for page in UInt64(2)..<1_000 { next[page] = PageBuffer(pageSize: 4096, number: page) }
        next.removeAll()
        session.keepDirtyTable(&next)
        #expect(next.capacity > 256 && session.takeDirtyTable().capacity == 0, "large tables are not kept")
    }

    /// Through the real write path: after an abort, a rolled-back nested body, a failed body of
    /// `write` and a commit, the next transaction starts with an empty table (a reused table
    /// never carries a page of an earlier transaction into the next), and what was committed is
    /// exactly what the store holds.
    @Test func reusedTablesStartEmptyAfterEveryEnding() throws {
        struct IntendedFailure: Error {}
        let dir = TemporaryDirectory()
        let db = try Database(path: dir.path)
        try db.write { tx in
            let tree = try tx.createTree("t")
            for i in 0..<500 { try tx.put(String(format: "k%04d", i), "v", in: tree) }
        }
        func expectFreshTable(_ label: String) throws {
            let tx = try db.beginWrite()
            #expect(tx.access.dirty.isEmpty, "\(label): the next transaction's table holds pages")
            tx.abort()
        }
        let aborted = try db.beginWrite()
        for i in 0..<50 { try aborted.put(String(format: "a%04d", i), "x", in: try aborted.tree("t")) }
        aborted.abort()
        try expectFreshTable("after abort")
        try db.write { tx in
            let tree = try tx.tree("t")
            try tx.put("kept", "1", in: tree)
            #expect(throws: IntendedFailure.self) {
                try tx.nested { sub in
                    for i in 0..<50 { try sub.put(String(format: "n%04d", i), "x", in: tree) }
                    throw IntendedFailure()
                }
            }
        }
        try expectFreshTable("after a rolled-back nested body")
        #expect(throws: IntendedFailure.self) {
            try db.write { tx in
                try tx.put("failed", "1", in: try tx.tree("t"))
                throw IntendedFailure()
            }
        }
        try expectFreshTable("after a failed write body")
        try db.read { tx in
            let tree = try tx.tree("t")
            #expect(try tx.count(tree) == 501)
            #expect(try tx.get("kept", in: tree) != nil)
            #expect(try tx.get("failed", in: tree) == nil)
            #expect(try tx.get("a0000", in: tree) == nil && tx.get("n0000", in: tree) == nil)
        }
        #expect(try db.check().isClean)
    }

    /// A table made for an expected number of pages (`init(expecting:)`, what a transaction after
    /// a large commit starts with) holds that many without growing, and works like any other.
    @Test func tableSizedForExpectedPagesDoesNotGrow() {
        let buffer = PageBuffer(pageSize: 4096, number: 2)
        var table = DirtyPages(expecting: 1000)
        let capacity = table.capacity
        #expect(capacity >= 2 * 1001)
        for key in 2..<1002 { table[UInt64(key)] = buffer }
        #expect(table.capacity == capacity && table.count == 1000)
        #expect((2..<1002).allSatisfy { table[UInt64($0)] === buffer } && table[1002] == nil)
        // More than expected: it grows as any table does.
        for key in 1002..<3002 { table[UInt64(key)] = buffer }
        #expect(table.capacity > capacity && table.count == 3000)
        #expect(DirtyPages(expecting: 0).capacity == 32)
    }

    /// After a commit too large for the kept table, only the next transaction's table is sized for
    /// it: a transaction after that one that aborted or committed nothing starts small again
    /// (before, every such transaction allocated a table sized for the large commit).
    @Test func onlyTheFirstTransactionAfterALargeCommitGetsALargeTable() throws {
        let dir = TemporaryDirectory()
        var options = DatabaseOptions()
        options.pageSize = 4096
        let db = try Database(path: dir.path, options: options)
        let value = [UInt8](repeating: 7, count: 1500)
        try db.write { tx in
            let tree = try tx.createTree("t")
            for i in 0..<600 { try tx.put(Array(String(format: "k%04d", i).utf8), value, in: tree) }
        }
        func capacityOfNextTable(_ end: (WriteTransaction) throws -> Void) throws -> Int {
            let tx = try db.beginWrite()
            let capacity = tx.access.dirty.capacity
            try end(tx)
            return capacity
        }
        #expect(try capacityOfNextTable { $0.abort() } > 256, "the first transaction after the large commit")
        #expect(try capacityOfNextTable { try $0.commit() } <= 256, "after an aborted transaction")
        #expect(try capacityOfNextTable { $0.abort() } <= 256, "after a commit of no pages")
        try db.write { tx in
            let tree = try tx.tree("t")
            for i in 0..<600 { try tx.put(Array(String(format: "k%04d", i).utf8), Array(value.dropLast()), in: tree) }
        }
        #expect(try capacityOfNextTable { $0.abort() } > 256, "after a second large commit")
        #expect(try capacityOfNextTable { $0.abort() } <= 256, "after that")
    }

    /// `forEachNumber` names exactly the table's pages and `drainTaking` hands over each buffer
    /// once, leaving the table empty and usable (what `keepLastCommit` relies on).
    @Test func numbersAndTakingDrainMatchTheTable() {
        var table = DirtyPages()
        let buffers = (0..<300).map { PageBuffer(pageSize: 4096, number: UInt64(2 + $0 * 7)) }
        for buffer in buffers { table[buffer.number] = buffer }
        _ = table.removeValue(forKey: buffers[5].number)
        var expected = Set(buffers.map(\.number))
        expected.remove(buffers[5].number)
        var named: [UInt64] = []
        table.forEachNumber { named.append($0) }
        #expect(named.count == expected.count && Set(named) == expected)
        var taken: [ObjectIdentifier: UInt64] = [:]
        table.drainTaking { buffer in taken[ObjectIdentifier(buffer)] = buffer.number }
        #expect(taken.count == expected.count && Set(taken.values) == expected)
        #expect(table.isEmpty && table[buffers[0].number] == nil)
        var after = 0
        table.forEachNumber { _ in after += 1 }
        #expect(after == 0)
        table[buffers[0].number] = buffers[0]
        #expect(table.count == 1 && table[buffers[0].number] === buffers[0])
    }
}
