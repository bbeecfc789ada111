import Glibc

/// Deletion from a copy-on-write B+tree.
///
/// After a node is removed, a page that falls under a quarter full is merged into a sibling when the
/// two fit in one page; the parent loses the separator and may underflow in turn. An empty page
/// always leaves the tree (even when it is its parent's only child: otherwise a later merge of that
/// parent would carry an empty leaf into the tree). An empty root empties the tree, and a root
/// branch with one child is replaced by that child, so every leaf stays at the same depth and holds
/// at least one entry under any sequence of operations.
extension WriteTransaction {
    /// `knownValue`: the caller has just found `key` holding this value in this state of the tree
    /// (the free list's cursor), so the look before touching is skipped. The entry removed must
    /// hold that value: a damaged tree can hold a key twice, and the descent by key could reach
    /// another copy than the cursor did (for the free list, the loaded record's pages would then
    /// stay listed as free while being reused). A key missing or holding another value is a
    /// corrupt page, reported after pages were copied.
    func remove(from record: inout TreeRecord, key: UnsafeRawBufferPointer, knownValue: UnsafeRawBufferPointer? = nil) throws -> Bool {
        let knownPresent = knownValue != nil
        try checkActive()
        forgetLeafHint(root: record.root) // merges move separators and free pages
        // Look before touching: deleting a missing key copies no pages.
        guard record.root != 0 else { return false }
        if !knownPresent, try lookup(in: record, key: key) == nil { return false }
        access.modificationCount += 1
        let (path, leaf) = try touchPath(&record, key: key)
        let (index, exact) = try leaf.page().search(key)
        guard exact else { throw StrataError.corruptPage(page: leaf.number, reason: knownPresent ? "a key the cursor found is missing from its leaf" : "key vanished between lookup and delete") }
        let node = try leaf.page().leaf(index)
        if let knownValue {
            let stored = try access.value(of: node, in: try leaf.page())
            guard stored.count == knownValue.count,
                  stored.withUnsafeBytes({ knownValue.isEmpty || memcmp($0.baseAddress!, knownValue.baseAddress!, knownValue.count) == 0 }) else {
                throw StrataError.corruptPage(page: leaf.number, reason: "the tree holds a key twice: the entry found by key is not the one the cursor read")
            }
        }
        if node.isOverflow { try freeOverflow(node.overflowPage, length: node.valueLength, record: &record) }
        leaf.removeNode(at: index)
        record.entries &-= 1
        try rebalance(after: path, current: leaf, record: &record)
        return true
    }

    /// Removes the entries with keys below `bound`, from the first on, at most `limit` of them;
    /// returns how many. One descent and one rebalance per leaf rather than per key: trimming the
    /// start of a log of thousands of entries costs a few dozen leaf edits.
    func removeLeading(from record: inout TreeRecord, below bound: UnsafeRawBufferPointer, limit: Int) throws -> Int {
        try checkActive()
        // `bound` may be a key this transaction handed out, in the very leaf whose nodes the
        // first round removes and repacks: later rounds compare against a copy.
        return try Array(bound).withUnsafeBytes { try removeLeading(from: &record, belowCopied: $0, limit: limit) }
    }

    private func removeLeading(from record: inout TreeRecord, belowCopied bound: UnsafeRawBufferPointer, limit: Int) throws -> Int {
        forgetLeafHints()
        var removed = 0
        while removed < limit, record.root != 0 {
            // Look before touching: a tree that starts at or after `bound` copies no pages.
            let cursor = Cursor(access: access, record: record)
            guard try cursor.first() else { break }
            let first = Array(try cursor.currentKeyBytes())
            guard first.withUnsafeBytes({ compareKeys($0, bound) }) < 0 else { break }
            access.modificationCount += 1
            let (path, leaf) = try first.withUnsafeBytes { try touchPath(&record, key: $0) }
            let page = try leaf.page()
            var count = 0
            while count < page.count, count < limit - removed, compareKeys(try page.leafKey(count), bound) < 0 {
                let node = try page.leaf(count)
                if node.isOverflow { try freeOverflow(node.overflowPage, length: node.valueLength, record: &record) }
                count += 1
            }
            guard count > 0 else {
                throw StrataError.corruptPage(page: leaf.number, reason: "the first leaf does not start with the tree's first key")
            }
            leaf.removeLeadingNodes(count)
            record.entries &-= UInt64(count)
            removed += count
            try rebalance(after: path, current: leaf, record: &record)
        }
        return removed
    }

    private func rebalance(after path: [PathEntry], current start: PageBuffer, record: inout TreeRecord) throws {
        var current = start
        var level = path.count
        let threshold = (pageSize - PageLayout.headerSize) / 4
        while true {
            if level == 0 {
                try collapseRoot(current, record: &record)
                return
            }
            let isLeaf = current.kind == .leaf
            let (parent, index) = path[level - 1]
            if current.count == 0 {
                // The parent forgets the empty page. Removing its node 0 is fine: a branch's
                // first key is never compared.
                parent.removeNode(at: index)
                freePages(current.number)
                if isLeaf { record.leafPages &-= 1 } else { record.branchPages &-= 1 }
                current = parent
                level -= 1
                continue
            }
            if current.usedSpace >= threshold { return }
            guard parent.count > 1 else {
                // An only child: nothing to merge with at this level.
                current = parent
                level -= 1
                continue
            }
            let (leftIndex, rightIndex) = index > 0 ? (index - 1, index) : (index, index + 1)
            let parentPage = try parent.page()
            let leftNumber = try parentPage.child(leftIndex)
            let rightNumber = try parentPage.child(rightIndex)
            guard leftNumber != rightNumber else {
                // Merging a page into itself would free it while the parent still names it. Rarely
                // met (the descent has usually renumbered one of the two already, so a forged
                // parent naming one page twice passes here and is refused at commit, where
                // `saveFreeList` finds the page freed twice); a nested level keeps numbers.
                throw StrataError.corruptPage(page: parent.number, reason: "two children are page \(leftNumber)")
            }
            let separator = Array(try parentPage.branchKey(rightIndex))
            let leftPage = try access.page(leftNumber)
            let rightPage = try access.page(rightNumber)
            guard leftPage.kind == rightPage.kind, leftPage.kind == current.kind else {
                throw StrataError.corruptPage(page: parent.number, reason: "siblings of different kinds")
            }
            // Merging appends the right page's nodes to the left one; a branch's first node gains
            // the separator as its key.
            let needed = rightPage.usedSpace + (isLeaf ? 0 : separator.count)
            let available = pageSize - leftPage.usedSpace - PageLayout.headerSize
            guard needed <= available else { return }

            let left = try touch(leftNumber)
            if left.number != leftNumber { parent.setChild(at: leftIndex, to: left.number) }
            let right = try touch(rightNumber)
            if right.number != rightNumber { parent.setChild(at: rightIndex, to: right.number) }
            // The decision above read the pages through `access`; the copies `touch` made are
            // what gets edited, and for a page the last commit wrote they come from the writer's
            // own buffers, not the file. A process writing the file behind the store's back can
            // make the two disagree (a header claiming a nearly empty page), and merging into a
            // copy without room would overrun it: decide again on the copies.
            guard left.kind == current.kind, right.kind == current.kind,
                  right.usedSpace + (isLeaf ? 0 : separator.count) <= pageSize - left.usedSpace - PageLayout.headerSize else {
                throw StrataError.corruptPage(page: leftNumber, reason: "a sibling changed in the file while the writer merged it")
            }
            let source = try right.page()
            for position in 0..<source.count {
                if isLeaf {
                    try left.insertLeafNode(at: left.count, from: source, node: position)
                } else {
                    let key = position == 0 ? separator : Array(try source.branchKey(position))
                    let child = try source.child(position)
                    key.withUnsafeBytes { left.insertBranch(at: left.count, key: $0, child: child) }
                }
            }
            parent.removeNode(at: rightIndex)
            freePages(right.number)
            if isLeaf { record.leafPages &-= 1 } else { record.branchPages &-= 1 }
            current = parent
            level -= 1
        }
    }

    /// An empty root leaf empties the tree; a root branch with one child hands the root down.
    private func collapseRoot(_ root: PageBuffer, record: inout TreeRecord) throws {
        var root = root
        while true {
            if root.count == 0 {
                freePages(root.number)
                if root.kind == .leaf { record.leafPages &-= 1 } else { record.branchPages &-= 1 }
                record.root = 0
                record.depth = 0
                return
            }
            if root.kind == .leaf { return }
            guard root.count == 1 else { return }
            let child = try root.page().child(0)
            freePages(root.number)
            record.branchPages &-= 1
            record.root = child
            record.depth -= 1
            guard let dirtyChild = access.dirty[child] else { return }
            root = dirtyChild
        }
    }

    /// Frees every page of a subtree (a dropped or cleared tree), overflow runs included.
    /// - Throws: `corruptPage` if the subtree reaches a page (or an overflow run) twice, as only
    ///   a damaged or forged file can: freeing it twice would list it twice in the free list, and
    ///   walking a shared subtree again at every reference takes exponential time.
    func freeSubtree(_ number: UInt64, level: Int, depth: Int) throws {
        forgetLeafHints()
        var visited = Set<UInt64>()
        try freeSubtree(number, level: level, depth: depth, visited: &visited)
    }

    private func freeSubtree(_ number: UInt64, level: Int, depth: Int, visited: inout Set<UInt64>) throws {
        guard number != 0 else { return }
        guard visited.insert(number).inserted else {
            throw StrataError.corruptPage(page: number, reason: "the tree reaches this page twice")
        }
        let page = try access.treePage(number, level: level, depth: depth)
        if page.isLeaf {
            for index in 0..<page.count {
                let node = try page.leaf(index)
                if node.isOverflow {
                    guard visited.insert(node.overflowPage).inserted else {
                        throw StrataError.corruptPage(page: number, reason: "names overflow page \(node.overflowPage), which the tree reaches twice")
                    }
                    freePages(node.overflowPage, count: try checkedOverflowRun(node.overflowPage, length: node.valueLength))
                }
            }
        } else {
            for index in 0..<page.count { try freeSubtree(try page.child(index), level: level + 1, depth: depth, visited: &visited) }
        }
        freePages(number)
    }
}
