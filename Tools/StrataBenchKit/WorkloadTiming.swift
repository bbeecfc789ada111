// What the workloads built on an opener (typed, entities) share: one JSON line per workload, a
// monotonic stopwatch and the process's CPU time beside it.
import Glibc

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

/// Wall-clock seconds and the process's CPU seconds (user and system) of one workload. On a
/// shared machine the wall clock of two engines' runs sees different loads (a neighbour's build
/// takes half the cores from one run and not the other); the CPU time of a workload that one
/// thread does on either side does not, and the pair tells the engine's cost from the wait.
struct WorkloadTiming {
    var wall: Double
    var cpu: Double

    static func measure(_ body: () throws -> Void) rethrows -> WorkloadTiming {
        let cpuStart = processCPUSeconds()
        let wall = try secondsTaken(body)
        return WorkloadTiming(wall: wall, cpu: processCPUSeconds() - cpuStart)
    }

    /// `,"cpu_seconds":…,"cpu_ops_per_sec":…` for a result line.
    func cpuFields(ops: Int) -> String {
        ",\"cpu_seconds\":\(JSONValue.number(cpu, decimals: 6)),\"cpu_ops_per_sec\":\(JSONValue.number(Double(ops) / cpu))"
    }

    private static func processCPUSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
