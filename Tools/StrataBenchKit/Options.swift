// Command line.
import Glibc

public let allWorkloads = ["fillseq", "fillrandom", "readrandom", "readseq", "synccommit", "smallcommit", "mixed", "notify", "groupcommit"]

func usage(engines: [EngineKind]) -> String {
    """
    usage: \(Sys.program) [WORKLOAD ...] [--engine \(Options.engineChoices(engines))] [--records N]
           [--batch B] [--dir DIR] [--duration SECONDS] [--sync-commits N] [--notify-commits N]
           [--notify-idle SECONDS] [--notify-schedule standard|dense|uniform|frugal|low-latency|stream]
           [--writers T,T,...] [--groupcommit-reads N] [--groupcommit-nosync]
    workloads (default: all, in this order): \(allWorkloads.joined(separator: " "))
    Also `typed [--typed-records N]` (the typed layer's Book workloads, first when
    no workload is named) and `entities [--entity-records N]` (the entity store's workloads).
    One JSON line per workload goes to stdout, a summary table to stderr.
    """
}

struct Options {
    var workloads: [String] = []
    /// The engines to run, in order (default: every registered one).
    var engines: [EngineKind] = []
    var records = 1_000_000
    var batch = 1000
    var dir: String?
    var duration = 5.0
    var syncCommits = 2000
    var notifyCommits = 2000
    var notifyIdle = 10.0
    var notifySchedule = "standard"
    /// groupcommit: the thread counts to run, reads between two writes, and non-durable commits.
    var writers = [1, 4, 16, 64]
    var groupCommitReads = 0
    var groupCommitNoSync = false
    // Internal, for child processes.
    var role: String?
    var store: String?
    var seed: UInt64 = 0

    static func engineChoices(_ engines: [EngineKind]) -> String {
        (engines.map(\.rawValue) + (engines.count > 1 ? ["all"] : [])).joined(separator: "|")
    }

    /// Parses `args`; `engines` are the registered engines, in their default order.
    static func parse(_ args: [String], engines: [EngineKind]) -> Options {
        var o = Options()
        o.engines = engines
        func fail(_ message: String) -> Never {
            Sys.err("\(Sys.program): \(message)")
            Sys.err(usage(engines: engines))
            exit(2)
        }
        var i = 0
        func value(_ flag: String) -> String {
            i += 1
            guard i < args.count else { fail("\(flag) needs a value") }
            return args[i]
        }
        func int(_ flag: String, min: Int) -> Int {
            let s = value(flag)
            guard let v = Int(s), v >= min else { fail("\(flag): expected an integer >= \(min), got '\(s)'") }
            return v
        }
        func seconds(_ flag: String) -> Double {
            let s = value(flag)
            guard let v = Double(s), v >= 0, v.isFinite else { fail("\(flag): expected seconds, got '\(s)'") }
            return v
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-h", "--help":
                Sys.out(usage(engines: engines))
                exit(0)
            case "--engine":
                let e = value(a)
                if e == "all" {
                    o.engines = engines
                } else if engines.contains(EngineKind(rawValue: e)) {
                    o.engines = [EngineKind(rawValue: e)]
                } else {
                    fail("--engine: expected \(engineChoices(engines)), got '\(e)'")
                }
            case "--records": o.records = int(a, min: 1)
            case "--batch": o.batch = int(a, min: 1)
            case "--dir": o.dir = value(a)
            case "--duration": o.duration = seconds(a)
            case "--sync-commits": o.syncCommits = int(a, min: 0)
            case "--notify-commits": o.notifyCommits = int(a, min: 1)
            case "--notify-idle": o.notifyIdle = seconds(a)
            case "--notify-schedule": o.notifySchedule = value(a)
            case "--writers":
                let list = value(a).split(separator: ",").compactMap { Int($0) }.filter { $0 > 0 }
                guard !list.isEmpty else { fail("--writers: expected thread counts like 1,4,16,64") }
                o.writers = list
            case "--groupcommit-reads": o.groupCommitReads = int(a, min: 0)
            case "--groupcommit-nosync": o.groupCommitNoSync = true
            case "--role": o.role = value(a)
            case "--store": o.store = value(a)
            case "--seed":
                let s = value(a)
                guard let v = UInt64(s) else { fail("--seed: bad value '\(s)'") }
                o.seed = v
            default:
                if a.hasPrefix("-") { fail("unknown option \(a)") }
                guard allWorkloads.contains(a) else { fail("unknown workload \(a)") }
                o.workloads.append(a)
            }
            i += 1
        }
        if o.workloads.isEmpty { o.workloads = allWorkloads }
        return o
    }
}
