/// The one descent of a B+tree: every walk from a page down to a leaf (point lookups, scans,
/// cursors, the write path's touched path, freeing a subtree) meets its pages through here, so
/// the rule of what a page may be at a given level is stated and checked once.
///
/// The rule (levels count from 1 at the root; `depth` is the tree record's): a page at
/// `level < depth` is a branch; a page at `level == depth` is a leaf holding at least one entry;
/// nothing lies below `depth`. A file that breaks it is corrupt — or cyclic, since a cycle
/// eventually meets a page at a level it cannot have — and gets `StrataError.corruptPage`
/// instead of an endless walk or a wrong answer. Deletion keeps the rule under every sequence of
/// operations (see TreeDelete.swift), so a well-formed tree never trips it.
enum TreeShape {
    /// Checks that a page met at `level` of a tree of `depth` is what that level must hold.
    @inline(__always)
    static func check(page number: UInt64, isLeaf: Bool, count: Int, level: Int, depth: Int) throws {
        if isLeaf {
            guard level == depth, count > 0 else {
                throw StrataError.corruptPage(page: number, reason: "leaf at level \(level) of a tree of depth \(depth), \(count) entries")
            }
        } else {
            guard level < depth else {
                throw StrataError.corruptPage(page: number, reason: "branch at level \(level) of a tree of depth \(depth): a cycle or a damaged tree")
            }
        }
    }
}

extension PageAccess {
    /// Page `number`, met at `level` of a tree of `depth`, checked against `TreeShape`.
    @inline(__always)
    func treePage(_ number: UInt64, level: Int, depth: Int) throws -> Page {
        let page = try self.page(number)
        try TreeShape.check(page: number, isLeaf: page.isLeaf, count: page.count, level: level, depth: depth)
        return page
    }

    /// Where a descent goes: towards a key (the child that may hold it; in the leaf, the first
    /// entry >= it), or along the first or last child to the first or last entry.
    enum DescentTarget {
        case key(UnsafeRawBufferPointer)
        case first
        case last
    }

    /// Walks from page `number` at `level` down to a leaf of a tree of `depth`, towards `target`;
    /// `passing` is told of each branch on the way with the index taken. Returns the leaf, the
    /// index reached in it and (for a key) whether that entry's key equals it. The leaf's lines
    /// are prefetched as soon as its number is known, so the search inside it finds them
    /// arriving instead of fetching one line per probe.
    @inline(__always)
    func descend(from number: UInt64, level: Int, depth: Int, towards target: DescentTarget,
                 passing: (Page, Int) -> Void = { _, _ in }) throws -> (leaf: Page, index: Int, exact: Bool) {
        var number = number
        var level = level
        while true {
            let page = try treePage(number, level: level, depth: depth)
            let index: Int
            var exact = false
            switch target {
            case .key(let key): (index, exact) = try page.search(key)
            case .first: index = 0
            case .last: index = page.count - 1
            }
            if page.isLeaf { return (page, index, exact) }
            passing(page, index)
            number = try page.child(index)
            level += 1
            if level == depth { prefetch(number) }
        }
    }
}
