import Glibc

/// Insertion into a copy-on-write B+tree.
///
/// The path from the root to the target leaf is "touched" top-down: each page becomes a dirty copy
/// (once per transaction) and its parent is re-pointed at the copy. A leaf that cannot take the new
/// node is split in two by bytes (near the middle, where the separator is shortest:
/// `shortSeparatorSplitPoint`); the separator, the shortest prefix of the right half's first key
/// that sorts after the left half's last, goes up, splitting parents as needed, and a split root
/// grows the tree by one level. Every node is at most a third of a page, which guarantees that a
/// full page plus one node always splits into two halves that fit.
extension WriteTransaction {
    typealias PathEntry = (buffer: PageBuffer, index: Int)

    /// The dirty copy of `number`, creating it (and freeing `number`) the first time.
    func touch(_ number: UInt64) throws -> PageBuffer {
        if let buffer = access.dirty[number] {
            // A page dirtied by an enclosing transaction is copied again (same number), so that
            // rolling this nested one back finds the enclosing one's bytes untouched.
            return buffer.nestingDepth == nestingDepth ? buffer : shadow(buffer)
        }
        // A page the last commit wrote, or a branch page an earlier commit wrote, is copied from
        // the writer's own buffer: built in memory, it needs no validation (see
        // `LastCommitPages`). Anything else comes from the file.
        let copy: PageBuffer
        if let built = session.lastCommitBuffer(number) {
            copy = session.pageBuffer(number: number)
            copy.copyTreePage(from: built.memory, lower: built.lower, upper: built.upper)
            lastCommitCopies &+= 1
        } else if let built = session.builtBranch(number) {
            copy = session.pageBuffer(number: number)
            copy.copyTreePage(from: built.memory, lower: built.lower, upper: built.upper)
            session.recycle(built)
            lastCommitCopies &+= 1
        } else {
            copy = try copyFromFile(number)
        }
        do {
            copy.renumber(as: try allocate())
        } catch {
            session.recycle(copy)
            throw error
        }
        install(copy)
        freePages(number)
        return copy
    }

    /// A copy of committed page `number` from the file, its heap validated on the copy.
    ///
    /// The header is checked in the mapping (`access.page`); then the used parts are copied
    /// (`copyTreePage`: a sequential read of the cold page that the prefetcher streams), and the
    /// heap check walks the copy in the cache instead of scattering reads over the mapping. It
    /// checks what the transaction will use: a page changed in the file after its header was read
    /// is caught by the copy's own header check or the heap check, not trusted half-copied.
    private func copyFromFile(_ number: UInt64) throws -> PageBuffer {
        let page = try access.page(number)
        // Read once: the mapping may change under the copy (the file is never trusted).
        let lower = page.lower
        let upper = page.upper
        guard lower <= upper, upper <= page.size else {
            throw StrataError.corruptPage(page: number, reason: "slot array ends at \(lower), heap starts at \(upper)")
        }
        let copy = session.pageBuffer(number: number)
        do {
            copy.copyTreePage(from: page.base, lower: lower, upper: upper)
            let copied = try copy.page()
            guard copied.count == page.count, copied.upper == upper else {
                throw StrataError.corruptPage(page: number, reason: "changed while it was copied")
            }
            try copied.validateHeap()
        } catch {
            session.recycle(copy)
            throw error
        }
        return copy
    }

    func newPage(kind: PageKind) throws -> PageBuffer {
        let buffer = session.pageBuffer(number: try allocate())
        buffer.initializeTreePage(kind: kind)
        install(buffer)
        return buffer
    }

    /// Touches the path from the root to the leaf for `key`. Returns the branch path and the leaf.
    func touchPath(_ record: inout TreeRecord, key: UnsafeRawBufferPointer) throws -> ([PathEntry], PageBuffer) {
        var path = leafHints.takePath()
        path.reserveCapacity(record.depth)
        var buffer = try touch(record.root)
        record.root = buffer.number
        var level = 1
        while true {
            let page = try buffer.page()
            try TreeShape.check(page: buffer.number, isLeaf: page.isLeaf, count: page.count, level: level, depth: record.depth)
            if page.isLeaf { return (path, buffer) }
            let (index, _) = try page.search(key)
            let childNumber = try page.child(index)
            let child = try touch(childNumber)
            if child.number != childNumber { buffer.setChild(at: index, to: child.number) }
            path.append((buffer, index))
            buffer = child
            level += 1
        }
    }

    func insert(into record: inout TreeRecord, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, mode: PutMode) throws -> Bool {
        try checkActive()
        let maximumKey = PageLayout.maximumKeySize(pageSize: pageSize)
        guard key.count <= maximumKey else { throw StrataError.keyTooLarge(size: key.count, maximum: maximumKey) }
        guard value.count <= PageLayout.maximumValueSize else {
            throw StrataError.valueTooLarge(size: value.count, maximum: PageLayout.maximumValueSize)
        }
        if mode == .insert, try lookup(in: record, key: key) != nil { throw StrataError.keyExists }
        access.modificationCount += 1

        let isInline = PageBuffer.leafNodeSize(keyCount: key.count, valueCount: value.count, overflow: false) + 2
            <= PageLayout.maximumNodeSize(pageSize: pageSize)
        if record.root == 0 {
            let leaf = try newPage(kind: .leaf)
            record.root = leaf.number
            record.depth = 1
            record.leafPages &+= 1
            try placeLeafNode(in: leaf, at: 0, key: key, value: value, isInline: isInline, record: &record)
            record.entries &+= 1
            return false
        }
        let size = PageBuffer.leafNodeSize(keyCount: key.count, valueCount: value.count, overflow: !isInline)
        // The leaf of the previous insert, when the key belongs there and fits: no descent.
        if let (leaf, index, exact, position) = try hintedLeaf(for: record, key: key),
           leaf.freeSpace + (exact ? leaf.nodeSize(index) + 2 : 0) >= size + 2 {
            if leaf.holdsStart(of: key) || leaf.holdsStart(of: value) {
                return try insertCopies(into: &record, key: key, value: value, mode: mode)
            }
            if exact, try replaceInPlace(in: leaf, at: index, value: value, isInline: isInline) {
                leafHints.setLastIndex(index + 1, at: position)
                leafHintInserts &+= 1
                return true
            }
            try replaceOrAdd(in: leaf, at: index, exact: exact, record: &record)
            try placeLeafNode(in: leaf, at: index, key: key, value: value, isInline: isInline, record: &record)
            // The next key of an ascending run goes right after this one.
            leafHints.setLastIndex(index + 1, at: position)
            leafHintInserts &+= 1
            return exact
        }
        var (path, leaf) = try touchPath(&record, key: key)
        if leaf.holdsStart(of: key) || leaf.holdsStart(of: value) {
            leafHints.recycle(&path)
            return try insertCopies(into: &record, key: key, value: value, mode: mode)
        }
        let (index, exact) = try leaf.page().search(key)
        if exact, try replaceInPlace(in: leaf, at: index, value: value, isInline: isInline) {
            rememberLeaf(leaf, path: &path, record: record, index: index + 1)
            return true
        }
        try replaceOrAdd(in: leaf, at: index, exact: exact, record: &record)
        if leaf.freeSpace >= size + 2 {
            try placeLeafNode(in: leaf, at: index, key: key, value: value, isInline: isInline, record: &record)
            rememberLeaf(leaf, path: &path, record: record, index: index + 1)
        } else {
            let overflowPage = isInline ? 0 : try writeOverflow(value, record: &record)
            try splitLeaf(leaf, insertAt: index, key: key, value: value, overflowPage: isInline ? nil : overflowPage,
                          path: path, record: &record)
            leafHints.recycle(&path)
        }
        return exact
    }

    /// `insert` again with copies of `key` and `value`: they point into the leaf it was about to
    /// rearrange (a view this transaction handed out: a cursor's key, a value from `get`, passed
    /// back to `put`). Removing the replaced node, or a split rebuilding the leaf in place, would
    /// move their bytes before they are copied in. Nothing changed yet but the path's copies
    /// (and maybe a free-list record loaded to allocate them), which the second descent finds
    /// dirty already. Nothing else a put rewrites can hold them:
    /// branch pages hold no viewable bytes, split siblings and overflow runs are new buffers, and
    /// a replaced overflow run leaves the dirty table without being reused while the view that
    /// holds it lives.
    private func insertCopies(into record: inout TreeRecord, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                              mode: PutMode) throws -> Bool {
        try Array(key).withUnsafeBytes { key in
            try Array(value).withUnsafeBytes { value in
                try insert(into: &record, key: key, value: value, mode: mode)
            }
        }
    }

    /// Replaces the value of node `index` (whose key is the one being put) in place when the new
    /// value is inline and as long as the stored inline one; returns whether it did. Nothing
    /// moves: a rewrite of a fixed-size record (an entity's header after a property of fixed
    /// width changed, a counter) skips removing the node (moving every node below it) and
    /// inserting it again. `value` does not point into `leaf` (the callers checked).
    @inline(__always)
    private func replaceInPlace(in leaf: PageBuffer, at index: Int, value: UnsafeRawBufferPointer, isInline: Bool) throws -> Bool {
        guard isInline else { return false }
        let old = try leaf.page().leaf(index)
        guard !old.isOverflow, old.valueLength == value.count else { return false }
        if value.count > 0 { UnsafeMutableRawPointer(mutating: old.payload).copyMemory(from: value.baseAddress!, byteCount: value.count) }
        return true
    }

    /// Before a node goes in at `index`: an existing node with the same key (`exact`) leaves
    /// (with its overflow run); otherwise the tree gains an entry.
    @inline(__always)
    private func replaceOrAdd(in leaf: PageBuffer, at index: Int, exact: Bool, record: inout TreeRecord) throws {
        if exact {
            let old = try leaf.page().leaf(index)
            if old.isOverflow { try freeOverflow(old.overflowPage, length: old.valueLength, record: &record) }
            leaf.removeNode(at: index)
        } else {
            record.entries &+= 1
        }
    }

    private func placeLeafNode(in leaf: PageBuffer, at index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                               isInline: Bool, record: inout TreeRecord) throws {
        if isInline {
            leaf.insertLeaf(at: index, key: key, value: value)
        } else {
            let first = try writeOverflow(value, record: &record)
            leaf.insertLeafOverflow(at: index, key: key, valueLength: value.count, overflowPage: first)
        }
    }

    // MARK: Overflow values

    /// Copies a large value into a fresh run of contiguous pages; returns the first page number.
    func writeOverflow(_ value: UnsafeRawBufferPointer, record: inout TreeRecord) throws -> UInt64 {
        let pages = Page.overflowPageCount(valueLength: value.count, pageSize: pageSize)
        let first = try allocate(pages: pages)
        install(PageBuffer(overflowRunHolding: value, pageSize: pageSize, number: first))
        record.overflowPages &+= UInt64(pages)
        return first
    }

    /// Frees the overflow run a leaf node names. The run is checked first (inside the snapshot or
    /// dirty, and headed as the overflow run of that length): a damaged leaf must not hand another
    /// tree's pages to the free list, where they would be reused while still in use.
    func freeOverflow(_ first: UInt64, length: Int, record: inout TreeRecord) throws {
        let pages = try checkedOverflowRun(first, length: length)
        freePages(first, count: pages)
        record.overflowPages &-= UInt64(pages)
    }

    /// The page count of the overflow run at `first` holding `length` bytes, after checking that
    /// the run is one (see `PageAccess.overflowValue`).
    func checkedOverflowRun(_ first: UInt64, length: Int) throws -> Int {
        guard length >= 0 else { throw StrataError.corruptPage(page: first, reason: "negative overflow length") }
        _ = try access.overflowValue(first, length: length)
        return Page.overflowPageCount(valueLength: length, pageSize: pageSize)
    }

    // MARK: Splits

    /// Chooses how many of `sizes` (node + slot bytes, in order) stay on the left page.
    private func splitPoint(_ sizes: [Int], appending: Bool) -> Int {
        splitPoint(count: sizes.count, appending: appending) { sizes[$0] }
    }

    /// `splitPoint` of the sizes of a leaf's nodes (in `original`) with a node of `newSize` bytes
    /// (node and slot) inserted at `index`, read from the page rather than an array.
    private func leafSplitPoint(original: PageBuffer, count: Int, newSize: Int, insertAt index: Int) -> Int {
        splitPoint(count: count + 1, appending: index == count) { position in
            position == index ? newSize : original.nodeSize(position < index ? position : position - 1) + 2
        }
    }

    /// How many of `count` nodes, the one at position `p` taking `size(p)` bytes (node and
    /// slot), stay on the left page.
    @inline(__always)
    private func splitPoint(count: Int, appending: Bool, size: (Int) -> Int) -> Int {
        // Sequential appends keep the left page full: fills and logs stay dense.
        if appending { return count - 1 }
        var total = 0
        for position in 0..<count { total += size(position) }
        var prefix = 0
        for position in 0..<count {
            prefix += size(position)
            if prefix * 2 >= total { return max(1, min(position + 1, count - 1)) }
        }
        return count - 1
    }

    private func splitLeaf(_ leaf: PageBuffer, insertAt index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer,
                           overflowPage: UInt64?, path: [PathEntry], record: inout TreeRecord) throws {
        forgetLeafHint(root: record.root) // separators move (and the root may change)
        let scratch = self.scratch
        scratch.copy(from: leaf.memory, renumberAs: leaf.number)
        let original = try scratch.page()
        let newSize = PageBuffer.leafNodeSize(keyCount: key.count, valueCount: value.count, overflow: overflowPage != nil) + 2
        // The nodes in their new order are the original ones with the new one at `index`:
        // position p holds the new node if p == index, else original node p (p < index) or p - 1.
        // `leftCount` of them stay on the left (as `splitPoint` chooses, without an array of sizes).
        let balanced = leafSplitPoint(original: scratch, count: original.count, newSize: newSize, insertAt: index)
        let leftCount = index == original.count ? balanced
            : try shortSeparatorSplitPoint(original: scratch, newKey: key, newSize: newSize, insertAt: index, balanced: balanced)

        let right = try newPage(kind: .leaf)
        record.leafPages &+= 1
        leaf.initializeTreePage(kind: .leaf)
        // Each half gets its positions in order: original nodes before the new one, the new one,
        // then original nodes after it (copied verbatim, the header written once per run).
        func fill(_ target: PageBuffer, positions: Range<Int>) throws {
            if positions.lowerBound < index {
                try target.appendLeafNodes(from: original, nodes: positions.lowerBound..<min(positions.upperBound, index))
            }
            if positions.contains(index) {
                if let overflowPage {
                    target.insertLeafOverflow(at: target.count, key: key, valueLength: value.count, overflowPage: overflowPage)
                } else {
                    target.insertLeaf(at: target.count, key: key, value: value)
                }
            }
            let after = max(positions.lowerBound, index + 1)
            if after < positions.upperBound { try target.appendLeafNodes(from: original, nodes: (after - 1)..<(positions.upperBound - 1)) }
        }
        try fill(leaf, positions: 0..<leftCount)
        try fill(right, positions: leftCount..<(original.count + 1))
        let separator = Self.shortestSeparator(after: try leaf.page().leafKey(leaf.count - 1), upTo: try right.page().leafKey(0))
        try insertSeparator(separator, right: right.number, path: path, record: &record)
    }

    /// Where to split a leaf (how many of its `original.count + 1` nodes, the new one at `index`,
    /// stay left): among the split points that leave each half between 35% and 65% of the
    /// bytes, the one whose separator (`shortestSeparator`) is shortest, the nearest to
    /// `balanced` among equals. Keys that share long prefixes in groups (an entity's header and
    /// history all start with its 16-byte identifier) then split between groups: the separator is
    /// a few bytes instead of a whole identifier and more, branch pages hold about twice the
    /// children, and a group stays on one leaf (a change to it dirties one leaf, not two).
    private func shortSeparatorSplitPoint(original: PageBuffer, newKey: UnsafeRawBufferPointer, newSize: Int, insertAt index: Int,
                                          balanced: Int) throws -> Int {
        let page = try original.page()
        let total = page.count + 1
        func size(_ position: Int) -> Int {
            position == index ? newSize : original.nodeSize(position < index ? position : position - 1) + 2
        }
        func key(_ position: Int) throws -> UnsafeRawBufferPointer {
            position == index ? newKey : try page.leafKey(position < index ? position : position - 1)
        }
        // Node and slot bytes of all nodes (`usedSpace` counts both), the new one's with them.
        let bytes = page.usedSpace + newSize
        let room = pageSize - PageLayout.headerSize
        var best = balanced, bestLength = Int.max, bestDistance = Int.max
        var left = size(0)
        for split in 1..<total {
            defer { left += size(split) }
            if left * 20 > bytes * 13 { break }
            guard left * 20 >= bytes * 7, left <= room, bytes - left <= room else { continue }
            let previous = try key(split - 1), next = try key(split)
            // Compared no further than the best so far: a longer separator cannot win.
            let common = min(previous.count, next.count, bestLength)
            var length = 0
            while length < common && previous[length] == next[length] { length += 1 }
            length = min(next.count, length + 1)
            let distance = abs(split - balanced)
            if length < bestLength || (length == bestLength && distance < bestDistance) {
                (best, bestLength, bestDistance) = (split, length, distance)
            }
        }
        return best
    }

    /// The shortest prefix of `right` (the first key of a split's right leaf) that sorts after
    /// `left` (the last key of its left leaf): a separator routes every key below it left and the
    /// rest right, so any key in `left < separator <= right` serves, and a shorter one lets a
    /// branch page hold more children. Keys with random prefixes (identifiers) need two or three
    /// bytes instead of the whole key: fewer branch pages, so a transaction of scattered changes
    /// copies fewer of them. (Branch keys were always arbitrary bytes between their children's
    /// keys; no reader assumes a separator is a stored key.)
    static func shortestSeparator(after left: UnsafeRawBufferPointer, upTo right: UnsafeRawBufferPointer) -> [UInt8] {
        // The first byte where they differ (left < right, so there is one, or left is a prefix).
        var length = 0
        let common = min(left.count, right.count)
        while length < common && left[length] == right[length] { length += 1 }
        return Array(right[0..<min(right.count, length + 1)])
    }

    /// Adds `(separator, right)` to the parent at the end of `path`, splitting upwards as needed.
    private func insertSeparator(_ separator: [UInt8], right: UInt64, path: [PathEntry], record: inout TreeRecord) throws {
        var separator = separator
        var right = right
        var level = path.count
        while level > 0 {
            level -= 1
            let (parent, childIndex) = path[level]
            let index = childIndex + 1
            let size = PageLayout.branchNodeHeader + separator.count
            if parent.freeSpace >= size + 2 {
                separator.withUnsafeBytes { parent.insertBranch(at: index, key: $0, child: right) }
                return
            }
            (separator, right) = try splitBranch(parent, insertAt: index, key: separator, child: right, record: &record)
        }
        // The root split: a new root with the two halves.
        let root = try newPage(kind: .branch)
        record.branchPages &+= 1
        root.insertBranch(at: 0, key: UnsafeRawBufferPointer(start: nil, count: 0), child: record.root)
        separator.withUnsafeBytes { root.insertBranch(at: 1, key: $0, child: right) }
        record.root = root.number
        record.depth += 1
        guard record.depth <= PageLayout.maximumDepth else { throw StrataError.misuse("tree depth limit reached") }
    }

    /// Splits a full branch while inserting `(key, child)` at `index`. The first key of the right
    /// half moves up as the separator and is stored empty in the right page.
    private func splitBranch(_ branch: PageBuffer, insertAt index: Int, key: [UInt8], child: UInt64,
                             record: inout TreeRecord) throws -> ([UInt8], UInt64) {
        scratch.copy(from: branch.memory, renumberAs: branch.number)
        let original = try scratch.page()
        var sizes = (0..<original.count).map { scratch.nodeSize($0) + 2 }
        sizes.insert(PageLayout.branchNodeHeader + key.count + 2, at: index)
        let leftCount = splitPoint(sizes, appending: index == original.count)

        let right = try newPage(kind: .branch)
        record.branchPages &+= 1
        branch.initializeTreePage(kind: .branch)
        var separator: [UInt8] = []
        for position in 0..<sizes.count {
            let target = position < leftCount ? branch : right
            var nodeKey: [UInt8]
            let nodeChild: UInt64
            if position == index {
                nodeKey = key
                nodeChild = child
            } else {
                let source = position < index ? position : position - 1
                nodeKey = Array(try original.branchKey(source))
                nodeChild = try original.child(source)
            }
            if position == leftCount {
                separator = nodeKey
                nodeKey = []
            }
            nodeKey.withUnsafeBytes { target.insertBranch(at: target.count, key: $0, child: nodeChild) }
        }
        return (separator, right.number)
    }
}
