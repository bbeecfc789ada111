extension Sequence {
    /// The sum of `value` over the elements, stopping at `UInt64.max` instead of trapping. For
    /// totals of counts read from the file (tree records' entry and page counts), which a damaged
    /// or forged store can set to anything: a report or a progress total shows the largest value
    /// rather than crashing the tool meant to diagnose the damage.
    func saturatingSum(_ value: (Element) throws -> UInt64) rethrows -> UInt64 {
        var total: UInt64 = 0
        for element in self {
            let (sum, overflow) = total.addingReportingOverflow(try value(element))
            if overflow { return .max }
            total = sum
        }
        return total
    }
}
