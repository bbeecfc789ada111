/// Nested transactions (savepoints) inside the write transaction.
///
/// A nested transaction is a level of the same `WriteTransaction`: what it saves when it begins
/// and what it changes in the dirty-page table is enough to put the enclosing level back exactly
/// as it was.
///
/// - Pages: every dirty buffer records the level that installed it (`PageBuffer.nestingDepth`).
///   A nested level never edits a shallower level's buffer in place: `touch` copies it into a new
///   buffer under the same page number (LMDB's nested transactions shadow their parent's dirty
///   pages the same way), and the level's `log` keeps, for each page number it changed in the
///   table (installed, replaced or removed), the buffer that was there before (or nil). Rolling
///   back puts those back and recycles the level's own buffers; merging relabels the level's
///   buffers as the parent's and hands the log entries the parent lacks up to it.
/// - Allocator (free list, reusable pages, file end), catalog, opened trees and the failure flag
///   are values: saved when the level begins, restored when it rolls back. The pages a rolled
///   back level allocated are therefore free again.
///
/// Invariant: every buffer in the dirty table with depth d > 0 is reachable from the log of level
/// d, and every buffer a log holds has a smaller depth than the level whose log holds it.
struct NestedFrame {
    let allocator: PageAllocator
    let catalog: TreeRecord
    let trees: [Transaction.TreeState]
    let hasFailed: Bool
    /// Page number -> the dirty buffer it had before this level first changed it (nil: none).
    /// Sized up front for a small body (a put touches its path: root, branches, leaf), so that
    /// the first few entries do not each grow and rehash the table (measured: ~1,000
    /// instructions per logged page when grown from empty, on group commit's one-put bodies).
    var log = [UInt64: PageBuffer?](minimumCapacity: NestedFrame.expectedLoggedPages)
    static let expectedLoggedPages = 8
    /// `abort()` was called at this level: it is rolled back and refuses further use until its
    /// `nested` call returns.
    var isAborted = false
}

extension WriteTransaction {
    /// Runs `body` as a nested transaction (a savepoint): if `body` throws, every change it made
    /// is rolled back — tree contents, trees created or dropped, pages allocated or freed — and
    /// the error is rethrown; this (outer) transaction goes on as if `body` had never run. If
    /// `body` returns, its changes become part of this transaction (and are committed or
    /// discarded with it). Nests to any depth.
    ///
    /// `sub` is this same transaction (tree handles stay valid across levels). Inside `body`,
    /// `abort()` rolls back only the nested transaction (further use of it throws `closed` until
    /// `body` returns) and `commit()` throws `misuse`. An operation that fails after it started
    /// changing pages poisons only the innermost nested transaction: it is rolled back when
    /// `body` ends, and if `body` swallowed that error, `nested` throws `misuse`.
    ///
    /// ```swift
    /// try db.write { tx in
    ///     let users = try tx.openOrCreateTree("users")
    ///     try tx.put("alice", "1", in: users)
    ///     // A duplicate leaves "alice" in place and the transaction usable.
    ///     _ = try? tx.nested { sub in try sub.put("bob", "2", in: users, mode: .insert) }
    /// }
    /// ```
    @discardableResult
    public func nested<Result>(_ body: (WriteTransaction) throws -> Result) throws -> Result {
        try checkActive()
        beginNested()
        let depth = nestingDepth
        let result: Result
        do {
            result = try body(self)
        } catch {
            endNested(depth: depth, keep: false)
            throw error
        }
        let aborted = nestedFrames.count >= depth && nestedFrames[depth - 1].isAborted
        let failed = hasFailed
        endNested(depth: depth, keep: !aborted && !failed)
        if failed && !aborted {
            throw StrataError.misuse("an operation of this nested transaction failed after it had started changing pages; the nested transaction was rolled back")
        }
        return result
    }

    /// The nesting level of the running code: 0 outside any `nested` body.
    var nestingDepth: Int { nestedFrames.count }

    func beginNested() {
        forgetLeafHints() // the level must shadow the hinted leaves before changing them
        nestedFrames.append(NestedFrame(allocator: allocator, catalog: catalog, trees: trees, hasFailed: hasFailed))
        hasFailed = false
    }

    /// Ends level `depth` (and any deeper one a misbehaving body left open), merging it into its
    /// parent or rolling it back. Nothing to do when the whole transaction was aborted meanwhile.
    private func endNested(depth: Int, keep: Bool) {
        while nestedFrames.count > depth { rollBackInnermost() }
        guard nestedFrames.count == depth else { return } // the transaction ended inside `body`
        if nestedFrames[depth - 1].isAborted {
            nestedFrames.removeLast()
            isActive = true
        } else if keep {
            mergeInnermost()
        } else {
            rollBackInnermost()
        }
    }

    /// Discards the innermost level: the dirty table, allocator, catalog and trees return to what
    /// they were when it began; its own buffers are recycled.
    func rollBackInnermost() {
        let frame = nestedFrames.removeLast()
        let depth = nestedFrames.count + 1
        forgetLeafHints()
        // Cursors stop working, and cannot be repositioned either: one opened inside may hold a
        // root page this level made, whose number the allocator may soon hand out again.
        access.endLease()
        for (number, previous) in frame.log {
            if let current = access.dirty[number], current.nestingDepth == depth { session.recycle(current) }
            access.dirty[number] = previous
        }
        allocator = frame.allocator
        catalog = frame.catalog
        trees = frame.trees
        hasFailed = frame.hasFailed
    }

    /// Makes the innermost level's changes its parent's.
    private func mergeInnermost() {
        let frame = nestedFrames.removeLast()
        let parentDepth = nestedFrames.count
        forgetLeafHints()
        for (number, previous) in frame.log {
            if let current = access.dirty[number], current.nestingDepth == parentDepth + 1 { current.nestingDepth = parentDepth }
            if let previous, previous.nestingDepth == parentDepth {
                // The parent's own copy, superseded (the parent's log already has this number).
                session.recycle(previous)
            } else if parentDepth > 0, nestedFrames[parentDepth - 1].log.index(forKey: number) == nil {
                nestedFrames[parentDepth - 1].log[number] = previous
            }
        }
        hasFailed = frame.hasFailed
    }

    /// `abort()` inside a nested body: rolls back the innermost level and closes it until its
    /// `nested` call returns.
    func abortInnermost() {
        rollBackInnermost()
        nestedFrames.append(NestedFrame(allocator: allocator, catalog: catalog, trees: trees, hasFailed: hasFailed, isAborted: true))
        isActive = false
    }

    // MARK: The dirty table, logged per level

    /// Puts a buffer of this level in the dirty table under its page number.
    @inline(__always)
    func install(_ buffer: PageBuffer) {
        let depth = nestingDepth
        buffer.nestingDepth = depth
        if depth > 0 { record(buffer.number, depth: depth) }
        access.dirty[buffer.number] = buffer
    }

    /// Removes page `number` from the dirty table; true if it was there.
    @inline(__always)
    func uninstall(_ number: UInt64) -> Bool {
        let depth = nestingDepth
        if depth > 0 {
            guard access.dirty[number] != nil else { return false }
            record(number, depth: depth)
        }
        return access.dirty.removeValue(forKey: number) != nil
    }

    /// A copy of an enclosing level's dirty page, under the same number, owned by this level.
    func shadow(_ buffer: PageBuffer) -> PageBuffer {
        // Only tree pages are touched, and those are single pages (overflow runs are never edited).
        let copy = session.pageBuffer(number: buffer.number)
        copy.copy(from: buffer.memory, renumberAs: buffer.number)
        install(copy)
        return copy
    }

    /// Logs the current entry of `number` the first time level `depth` changes it.
    private func record(_ number: UInt64, depth: Int) {
        if nestedFrames[depth - 1].log.index(forKey: number) == nil {
            nestedFrames[depth - 1].log[number] = access.dirty[number]
        }
    }
}
