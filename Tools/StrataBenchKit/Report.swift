// Results: one JSON line per workload on stdout, a summary table on stderr at the end.

enum JSONValue {
    case int(Int)
    case double(Double)
    case string(String)
    case doubles([Double])
    /// A duration in seconds, kept to microseconds.
    case seconds(Double)

    var text: String {
        switch self {
        case .int(let v): return String(v)
        case .double(let v): return JSONValue.number(v)
        case .string(let s): return "\"" + s + "\""  // only plain ASCII names are used
        case .doubles(let a): return "[" + a.map { JSONValue.number($0) }.joined(separator: ",") + "]"
        case .seconds(let v): return JSONValue.number(v, decimals: 6)
        }
    }

    /// Rounded to `decimals` places; JSON has no NaN/Infinity.
    static func number(_ v: Double, decimals: Int = 3) -> String {
        guard v.isFinite else { return "null" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let r = (v * scale).rounded() / scale
        if r == r.rounded(), abs(r) < 1e15 { return String(Int(r)) }
        return String(r)
    }
}

struct BenchResult {
    var engine: EngineKind
    var workload: String
    var records: Int
    var ops: Int
    var seconds: Double
    /// Workload-specific fields, in output order.
    var extra: [(String, JSONValue)] = []

    var opsPerSec: Double { seconds > 0 ? Double(ops) / seconds : 0 }

    var jsonLine: String {
        var fields: [(String, JSONValue)] = [
            ("engine", .string(engine.rawValue)),
            ("workload", .string(workload)),
            ("records", .int(records)),
            ("ops", .int(ops)),
            ("seconds", .seconds(seconds)),
            ("ops_per_sec", .double(opsPerSec)),
        ]
        fields += extra
        return "{" + fields.map { "\"\($0.0)\":\($0.1.text)" }.joined(separator: ",") + "}"
    }

    func value(_ name: String) -> JSONValue? { extra.first { $0.0 == name }?.1 }
}

enum Report {
    static func emit(_ r: BenchResult) {
        Sys.out(r.jsonLine)
    }

    static func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - s.count))
        return right ? fill + s : s + fill
    }

    static func fixed(_ v: Double, _ decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let neg = v < 0
        let n = Int((abs(v) * scale).rounded())
        var s = String(n / Int(scale))
        if decimals > 0 {
            let frac = String(n % Int(scale))
            s += "." + String(repeating: "0", count: decimals - frac.count) + frac
        }
        return neg ? "-" + s : s
    }

    static func notes(_ r: BenchResult) -> String {
        func num(_ name: String, _ decimals: Int = 1) -> String {
            switch r.value(name) {
            case .double(let d)?: return fixed(d, decimals)
            case .int(let i)?: return String(i)
            default: return "-"
            }
        }
        switch r.workload {
        case "mixed":
            return "readers \(num("reader_gets_per_sec", 0)) gets/s total"
        case "notify":
            return "p50 \(num("p50_us")) us, p99 \(num("p99_us")) us, max \(num("max_us")) us, "
                + "events \(num("events")), coalesced \(num("coalesced")) (unmeasured \(num("unmeasured"))), first after idle \(num("first_after_idle_us")) us, cpu \(num("cpu_percent"))%, idle cpu \(num("idle_cpu_percent"))%, writer commit p50 \(num("writer_commit_p50_us")) / p99 \(num("writer_commit_p99_us")) us"
        case "groupcommit":
            return "writers \(num("writers")), p50 \(num("p50_us")) us, p99 \(num("p99_us")) us, commits \(num("commits"))"
        default:
            return ""
        }
    }

    static func table(_ results: [BenchResult]) {
        guard !results.isEmpty else { return }
        Sys.err("")
        Sys.err(pad("engine", 7) + pad("workload", 11) + pad("ops/s", 13, right: true)
                + pad("seconds", 10, right: true) + "  notes")
        for r in results {
            Sys.err(pad(r.engine.rawValue, 7) + pad(r.workload, 11)
                    + pad(fixed(r.opsPerSec, 0), 13, right: true)
                    + pad(fixed(r.seconds, 3), 10, right: true) + "  " + notes(r))
        }
    }
}
