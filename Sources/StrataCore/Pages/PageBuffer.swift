import Glibc

/// Memory owned by a write transaction for one dirty page (or one overflow run of pages).
///
/// Dirty pages live here, never in the shared mapping: the mapping is read-only, and a page that a
/// committed snapshot can reach is never modified (copy-on-write). The buffer is written to the file
/// at commit. All editing of slotted pages happens through the methods below, which keep the
/// invariant `32 + 2 * count == lower <= upper <= pageSize` and a heap with no holes.
final class PageBuffer {
    let memory: UnsafeMutableRawPointer
    let pageSize: Int
    let pageCount: Int
    /// `pageSize * pageCount`.
    let byteCount: Int
    private(set) var number: UInt64
    /// The nested transaction level that installed this buffer in the dirty table (0: the
    /// outermost). A nested transaction copies a shallower buffer before changing it.
    var nestingDepth = 0

    init(pageSize: Int, pageCount: Int = 1, number: UInt64) {
        self.pageSize = pageSize
        self.pageCount = pageCount
        byteCount = pageSize * pageCount
        self.number = number
        memory = UnsafeMutableRawPointer.allocate(byteCount: pageSize * pageCount, alignment: 64)
    }

    /// A run of pages holding one large value after an overflow header; `number` is its first page.
    convenience init(overflowRunHolding value: UnsafeRawBufferPointer, pageSize: Int, number: UInt64) {
        let pages = Page.overflowPageCount(valueLength: value.count, pageSize: pageSize)
        self.init(pageSize: pageSize, pageCount: pages, number: number)
        memset(memory, 0, PageLayout.headerSize)
        memory.storeBytes(of: number, toByteOffset: PageLayout.pageNumberOffset, as: UInt64.self)
        memory.storeBytes(of: PageKind.overflow.rawValue, toByteOffset: PageLayout.kindOffset, as: UInt8.self)
        memory.storeBytes(of: UInt32(pages), toByteOffset: PageLayout.overflowCountOffset, as: UInt32.self)
        if value.count > 0 { memcpy(memory + PageLayout.headerSize, value.baseAddress!, value.count) }
        let tail = byteCount - PageLayout.headerSize - value.count
        if tail > 0 { memset(memory + PageLayout.headerSize + value.count, 0, tail) }
    }

    deinit { memory.deallocate() }

    /// Gives a pooled buffer a new page number (its bytes are overwritten by the caller).
    func reassign(to newNumber: UInt64) { number = newNumber }

    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: memory, count: byteCount) }

    /// Whether `bytes` start inside this buffer: a view into this page handed back in. Bytes of
    /// any other allocation cannot run into the buffer, so this is also whether they share any
    /// of its memory. (Three instructions: `put` asks it for every key and value.)
    @inline(__always)
    func holdsStart(of bytes: UnsafeRawBufferPointer) -> Bool {
        UInt(bitPattern: bytes.baseAddress) &- UInt(bitPattern: memory) < UInt(bitPattern: byteCount)
    }

    /// (Inlined: called several times a put, where the call cost about as much as the checks.)
    @inline(__always) func page() throws -> Page { try Page(validating: memory, size: pageSize, number: number) }

    // MARK: Header

    private func load16(_ offset: Int) -> Int { Int(memory.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
    private func store16(_ value: Int, _ offset: Int) { memory.storeBytes(of: UInt16(value), toByteOffset: offset, as: UInt16.self) }

    var count: Int { load16(PageLayout.countOffset) }
    var kind: PageKind? { PageKind(rawValue: memory.load(fromByteOffset: PageLayout.kindOffset, as: UInt8.self)) }
    /// Where the slot array ends.
    var lower: Int { PageLayout.headerSize + 2 * count }
    /// Where the heap starts.
    var upper: Int { load16(PageLayout.upperOffset) }
    var freeSpace: Int { upper - lower }
    var usedSpace: Int { pageSize - PageLayout.headerSize - freeSpace }

    func initializeTreePage(kind: PageKind) {
        memset(memory, 0, PageLayout.headerSize)
        memory.storeBytes(of: number, toByteOffset: PageLayout.pageNumberOffset, as: UInt64.self)
        memory.storeBytes(of: kind.rawValue, toByteOffset: PageLayout.kindOffset, as: UInt8.self)
        store16(0, PageLayout.countOffset)
        store16(PageLayout.headerSize, PageLayout.lowerOffset)
        store16(pageSize, PageLayout.upperOffset)
    }

    /// Copies a whole page into this buffer and renames it (a split's scratch copy, a nested
    /// transaction's copy of a dirty page; pages from the file go through `copyTreePage`).
    func copy(from source: UnsafeRawPointer, renumberAs newNumber: UInt64) {
        memcpy(memory, source, pageSize)
        number = newNumber
        memory.storeBytes(of: newNumber, toByteOffset: PageLayout.pageNumberOffset, as: UInt64.self)
    }

    /// Copies the used parts of a tree page into this buffer: the header and slot array
    /// (`0..<lower`) and the heap (`upper..<pageSize`), not the free gap between them, which keeps
    /// what the buffer held (zeros or an earlier page of this store: `WriterSession.pageBuffer`).
    /// As LMDB's `mdb_page_copy`: a random insert copies a leaf about two-thirds full, and the
    /// copy's cost is reading the committed page. The caller has checked
    /// `lower <= upper <= pageSize`; the number is the caller's to set (`renumber`).
    func copyTreePage(from source: UnsafeRawPointer, lower: Int, upper: Int) {
        precondition(lower >= PageLayout.headerSize && lower <= upper && upper <= pageSize, "copyTreePage: slot array and heap out of order")
        memcpy(memory, source, lower)
        if upper < pageSize { memcpy(memory + upper, source + upper, pageSize - upper) }
    }

    /// Gives the buffer page number `newNumber`, in its header too (after `copyTreePage`).
    func renumber(as newNumber: UInt64) {
        number = newNumber
        memory.storeBytes(of: newNumber, toByteOffset: PageLayout.pageNumberOffset, as: UInt64.self)
    }

    func setTransaction(_ id: UInt64) {
        memory.storeBytes(of: id, toByteOffset: PageLayout.transactionOffset, as: UInt64.self)
    }

    /// Stores the checksum of the page (or overflow run), in the store's `checksum`; called once
    /// per dirty page at commit.
    func seal(_ checksum: PageChecksum) {
        memory.storeBytes(of: checksum.of(UnsafeRawPointer(memory), byteCount: byteCount),
                          toByteOffset: PageLayout.checksumOffset, as: UInt64.self)
    }

    /// The checksum `seal(_:)` stored.
    var storedChecksum: UInt64 { Page.Header(memory).storedChecksum }

    // MARK: Nodes

    private func offset(_ index: Int) -> Int { load16(PageLayout.headerSize + 2 * index) }

    /// Bytes node `index` occupies in the heap (not counting its 2-byte slot).
    func nodeSize(_ index: Int) -> Int {
        let offset = offset(index)
        if kind == .branch {
            return PageLayout.branchNodeHeader + Int(memory.loadUnaligned(fromByteOffset: offset + 8, as: UInt16.self))
        }
        let flags = memory.load(fromByteOffset: offset, as: UInt8.self)
        let keyLength = Int(memory.loadUnaligned(fromByteOffset: offset + 2, as: UInt16.self))
        let valueLength = Int(memory.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        return PageLayout.leafNodeHeader + keyLength + (flags & LeafFlags.overflow != 0 ? 8 : valueLength)
    }

    /// Reserves `size` heap bytes and a slot at `index`; returns the node's address.
    /// The caller has checked `freeSpace >= size + 2`.
    @inline(__always) private func reserveNode(at index: Int, size: Int) -> UnsafeMutableRawPointer {
        let count = self.count
        precondition(freeSpace >= size + 2, "page overflow: callers must split first")
        let newUpper = upper - size
        let slots = memory + PageLayout.headerSize
        if index < count {
            memmove(slots + 2 * (index + 1), slots + 2 * index, 2 * (count - index))
        }
        store16(newUpper, PageLayout.headerSize + 2 * index)
        store16(count + 1, PageLayout.countOffset)
        store16(PageLayout.headerSize + 2 * (count + 1), PageLayout.lowerOffset)
        store16(newUpper, PageLayout.upperOffset)
        return memory + newUpper
    }

    static func leafNodeSize(keyCount: Int, valueCount: Int, overflow: Bool) -> Int {
        PageLayout.leafNodeHeader + keyCount + (overflow ? 8 : valueCount)
    }

    func insertLeaf(at index: Int, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        let node = reserveNode(at: index, size: PageBuffer.leafNodeSize(keyCount: key.count, valueCount: value.count, overflow: false))
        node.storeBytes(of: 0, as: UInt8.self)
        node.storeBytes(of: 0, toByteOffset: 1, as: UInt8.self)
        node.storeBytes(of: UInt16(key.count), toByteOffset: 2, as: UInt16.self)
        node.storeBytes(of: UInt32(value.count), toByteOffset: 4, as: UInt32.self)
        if key.count > 0 { memcpy(node + 8, key.baseAddress!, key.count) }
        if value.count > 0 { memcpy(node + 8 + key.count, value.baseAddress!, value.count) }
    }

    func insertLeafOverflow(at index: Int, key: UnsafeRawBufferPointer, valueLength: Int, overflowPage: UInt64) {
        let node = reserveNode(at: index, size: PageBuffer.leafNodeSize(keyCount: key.count, valueCount: 0, overflow: true))
        node.storeBytes(of: LeafFlags.overflow, as: UInt8.self)
        node.storeBytes(of: 0, toByteOffset: 1, as: UInt8.self)
        node.storeBytes(of: UInt16(key.count), toByteOffset: 2, as: UInt16.self)
        node.storeBytes(of: UInt32(valueLength), toByteOffset: 4, as: UInt32.self)
        if key.count > 0 { memcpy(node + 8, key.baseAddress!, key.count) }
        (node + 8 + key.count).storeBytes(of: overflowPage, as: UInt64.self)
    }

    /// Copies node `index` of `source` (a leaf) verbatim into slot `at`.
    func insertLeafNode(at index: Int, from source: Page, node sourceIndex: Int) throws {
        let node = try source.leaf(sourceIndex)
        let size = node.storedSize
        let target = reserveNode(at: index, size: size)
        memcpy(target, node.key.baseAddress! - PageLayout.leafNodeHeader, size)
    }

    /// Appends nodes `nodes` of `source` (a leaf) verbatim after the last slot, as many calls of
    /// `insertLeafNode(at: count, …)` would, writing the header once. The caller has checked
    /// that they fit (a split fills its two halves this way).
    func appendLeafNodes(from source: Page, nodes: Range<Int>) throws {
        var count = self.count
        var upper = self.upper
        let slots = memory + PageLayout.headerSize
        for sourceIndex in nodes {
            let node = try source.leaf(sourceIndex)
            let size = node.storedSize
            precondition(upper - size >= PageLayout.headerSize + 2 * (count + 1), "page overflow: callers must split first")
            upper -= size
            memcpy(memory + upper, node.key.baseAddress! - PageLayout.leafNodeHeader, size)
            slots.storeBytes(of: UInt16(upper), toByteOffset: 2 * count, as: UInt16.self)
            count += 1
        }
        store16(count, PageLayout.countOffset)
        store16(PageLayout.headerSize + 2 * count, PageLayout.lowerOffset)
        store16(upper, PageLayout.upperOffset)
    }

    func insertBranch(at index: Int, key: UnsafeRawBufferPointer, child: UInt64) {
        let node = reserveNode(at: index, size: PageLayout.branchNodeHeader + key.count)
        node.storeBytes(of: child, as: UInt64.self)
        node.storeBytes(of: UInt16(key.count), toByteOffset: 8, as: UInt16.self)
        if key.count > 0 { memcpy(node + 10, key.baseAddress!, key.count) }
    }

    func setChild(at index: Int, to child: UInt64) {
        (memory + offset(index)).storeBytes(of: child, as: UInt64.self)
    }

    /// Removes node `index` and closes the hole it leaves in the heap.
    func removeNode(at index: Int) {
        let count = self.count
        let removedOffset = offset(index)
        let removedSize = nodeSize(index)
        let upper = self.upper
        // Nodes stored below the removed one (lower addresses) slide up by its size.
        if removedOffset > upper {
            memmove(memory + upper + removedSize, memory + upper, removedOffset - upper)
        }
        let slots = memory + PageLayout.headerSize
        if index < count - 1 {
            memmove(slots + 2 * index, slots + 2 * (index + 1), 2 * (count - 1 - index))
        }
        for slot in 0..<(count - 1) {
            let o = offset(slot)
            if o < removedOffset { store16(o + removedSize, PageLayout.headerSize + 2 * slot) }
        }
        store16(count - 1, PageLayout.countOffset)
        store16(PageLayout.headerSize + 2 * (count - 1), PageLayout.lowerOffset)
        store16(upper + removedSize, PageLayout.upperOffset)
    }

    /// Removes nodes `0..<removed` at once (`removed <= count`), as `removed` calls of
    /// `removeNode(at: 0)` would, but in one pass over the page instead of one per node: the kept
    /// nodes are repacked at the end of the page. (Trimming the old end of a log
    /// removes a leaf's nodes this way.)
    func removeLeadingNodes(_ removed: Int) {
        let count = self.count
        precondition(removed >= 0 && removed <= count, "removeLeadingNodes: \(removed) of \(count) nodes")
        guard removed > 0 else { return }
        let kept = count - removed
        withUnsafeTemporaryAllocation(byteCount: pageSize, alignment: 8) { temporary in
            let packed = temporary.baseAddress!
            var newUpper = pageSize
            let slots = memory + PageLayout.headerSize
            // The kept nodes in slot order, each copied below the previous one; their new
            // offsets go straight into the slots, moved to the front (slot `slot - removed` was
            // read already, or belongs to a removed node).
            for slot in removed..<count {
                let size = nodeSize(slot)
                newUpper -= size
                memcpy(packed + newUpper, memory + offset(slot), size)
                slots.storeBytes(of: UInt16(newUpper), toByteOffset: 2 * (slot - removed), as: UInt16.self)
            }
            if newUpper < pageSize { memcpy(memory + newUpper, packed + newUpper, pageSize - newUpper) }
            store16(kept, PageLayout.countOffset)
            store16(PageLayout.headerSize + 2 * kept, PageLayout.lowerOffset)
            store16(newUpper, PageLayout.upperOffset)
        }
    }
}
