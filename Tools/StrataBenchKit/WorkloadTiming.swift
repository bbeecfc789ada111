// What the workloads built on an opener (typed, entities) share: one JSON line per workload and
// a monotonic stopwatch.

/// Prints one result line: engine, workload, records, ops, seconds, ops/s, then `extra` (",\"k\":v...").
func reportWorkload(engine: String, workload: String, records: Int, ops: Int, seconds: Double, extra: String = "") {
    let line = "{\"engine\":\"\(engine)\",\"workload\":\"\(workload)\",\"records\":\(records),\"ops\":\(ops),"
        + "\"seconds\":\(JSONValue.number(seconds, decimals: 6)),\"ops_per_sec\":\(JSONValue.number(Double(ops) / seconds))\(extra)}"
    Sys.out(line)
}

/// Seconds `body` took.
func secondsTaken(_ body: () throws -> Void) rethrows -> Double {
    let start = Sys.monoNanos()
    try body()
    return Double(Sys.monoNanos() - start) / 1e9
}
