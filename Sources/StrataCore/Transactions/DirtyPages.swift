/// The dirty pages of a write transaction, by page number.
///
/// Every page access of a write transaction looks here first, so this is a small open-addressing
/// table (linear probing, at most half full) with a multiplicative hash instead of a `Dictionary`,
/// whose per-lookup SipHash was a visible share of small commits. Empty slots hold `empty`, which
/// is no page number (page numbers stay below 2^40).
///
/// The storage is allocated by the first insert: every read transaction and snapshot has a
/// `PageAccess` with a table it never fills, and allocating (then freeing) two arrays for it was
/// about a tenth of a one-get read transaction.
struct DirtyPages {
    private static let empty = UInt64.max
    private static let initialCapacity = 32
    private var keys: [UInt64] = []
    private var buffers: [PageBuffer?] = []
    private(set) var count = 0

    init() {}

    /// An empty table with storage for `expected` pages without growing (up to 2^15 of them).
    init(expecting expected: Int) {
        var capacity = DirtyPages.initialCapacity
        while capacity < 2 * (expected + 1) && capacity < 1 << 16 { capacity *= 2 }
        keys = Array(repeating: DirtyPages.empty, count: capacity)
        buffers = Array(repeating: nil, count: capacity)
    }

    var isEmpty: Bool { count == 0 }

    /// Every dirty buffer, in no particular order.
    var values: [PageBuffer] { buffers.compactMap { $0 } }

    /// Every dirty buffer, in ascending page order (what a commit writes). A small commit's few
    /// buffers are sorted by insertion, moving references without retaining them: sorting them
    /// with `sorted(by:)` retained and released each one per comparison, several thousand
    /// instructions of a small commit. A larger commit sorts the page numbers with their slots
    /// (plain integers) and then takes the buffers in that order: sorting the buffers themselves
    /// cost a commit of 186 pages about 50,000 instructions, mostly retains and releases.
    var valuesByNumber: [PageBuffer] {
        var pages: [PageBuffer] = []
        pages.reserveCapacity(count)
        guard count <= 32 else {
            var order: [(number: UInt64, slot: Int)] = []
            order.reserveCapacity(count)
            for index in keys.indices where keys[index] != DirtyPages.empty { order.append((keys[index], index)) }
            // Every buffer is stored under its own page number, and keys are distinct: the
            // order is the buffers' order by number, and total.
            order.sort { $0.number < $1.number }
            for entry in order { pages.append(buffers[entry.slot]!) }
            return pages
        }
        for index in keys.indices where keys[index] != DirtyPages.empty { pages.append(buffers[index]!) }
        pages.withUnsafeMutableBufferPointer { pages in
            var sorted = 1
            while sorted < pages.count {
                var index = sorted
                while index > 0 && pages[index - 1].number > pages[index].number {
                    pages.swapAt(index - 1, index)
                    index -= 1
                }
                sorted += 1
            }
        }
        return pages
    }

    /// Slots allocated (0 until the first insert).
    var capacity: Int { keys.count }

    @inline(__always)
    private static func home(of key: UInt64, mask: Int) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    /// The slot holding `key`, if any.
    @inline(__always)
    private func slot(of key: UInt64) -> Int? {
        // The empty marker is never a key (it would "match" the first empty slot).
        guard key != DirtyPages.empty, !keys.isEmpty else { return nil }
        let mask = keys.count - 1
        var index = DirtyPages.home(of: key, mask: mask)
        while true {
            let stored = keys[index]
            if stored == key { return index }
            if stored == DirtyPages.empty { return nil }
            index = (index + 1) & mask
        }
    }

    subscript(number: UInt64) -> PageBuffer? {
        @inline(__always) get { slot(of: number).flatMap { buffers[$0] } }
        set {
            if let newValue { insert(newValue, at: number) } else { _ = removeValue(forKey: number) }
        }
    }

    private mutating func insert(_ buffer: PageBuffer, at key: UInt64) {
        precondition(key != DirtyPages.empty, "not a page number")
        if let index = slot(of: key) {
            buffers[index] = buffer
            return
        }
        if (count + 1) * 2 > keys.count { grow() }
        let mask = keys.count - 1
        var index = DirtyPages.home(of: key, mask: mask)
        while keys[index] != DirtyPages.empty { index = (index + 1) & mask }
        keys[index] = key
        buffers[index] = buffer
        count += 1
    }

    private mutating func grow() {
        let oldKeys = keys
        let oldBuffers = buffers
        let capacity = max(DirtyPages.initialCapacity, oldKeys.count * 2)
        keys = Array(repeating: DirtyPages.empty, count: capacity)
        buffers = Array(repeating: nil, count: capacity)
        count = 0
        for index in oldKeys.indices where oldKeys[index] != DirtyPages.empty {
            insert(oldBuffers[index]!, at: oldKeys[index])
        }
    }

    /// Removes `key`; returns its buffer if it was there. Later entries of the probe run move back
    /// into the hole, so lookups never need tombstones.
    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> PageBuffer? {
        guard var hole = slot(of: key) else { return nil }
        let removed = buffers[hole]
        let mask = keys.count - 1
        var next = hole
        while true {
            next = (next + 1) & mask
            let moving = keys[next]
            if moving == DirtyPages.empty { break }
            let home = DirtyPages.home(of: moving, mask: mask)
            // `moving` may fill the hole unless its home lies cyclically in (hole, next].
            let homeInRange = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
            if !homeInRange {
                keys[hole] = moving
                buffers[hole] = buffers[next]
                hole = next
            }
        }
        keys[hole] = DirtyPages.empty
        buffers[hole] = nil
        count -= 1
        return removed
    }

    /// Empties the table in place (no new storage: a transaction ends with this).
    mutating func removeAll() {
        drain { _ in }
    }

    /// Shows every buffer to `body`, in no particular order (without an intermediate array).
    func forEach(_ body: (PageBuffer) -> Void) {
        guard count > 0 else { return }
        for index in keys.indices where keys[index] != DirtyPages.empty { body(buffers[index]!) }
    }

    /// Shows every page number to `body`, in no particular order, without touching the buffers.
    func forEachNumber(_ body: (UInt64) -> Void) {
        guard count > 0 else { return }
        for key in keys where key != DirtyPages.empty { body(key) }
    }

    /// `drain` handing each buffer over (moved out of the table, not retained and released).
    mutating func drainTaking(_ body: (consuming PageBuffer) -> Void) {
        guard count > 0 else { return }
        for index in keys.indices where keys[index] != DirtyPages.empty {
            keys[index] = DirtyPages.empty
            body(buffers[index].take()!)
        }
        count = 0
    }

    /// Hands every buffer to `body` and empties the table in place, without an intermediate array.
    mutating func drain(_ body: (PageBuffer) -> Void) {
        guard count > 0 else { return }
        for index in keys.indices where keys[index] != DirtyPages.empty {
            body(buffers[index]!)
            keys[index] = DirtyPages.empty
            buffers[index] = nil
        }
        count = 0
    }
}
