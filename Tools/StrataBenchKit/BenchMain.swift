// The entry point every benchmark executable calls with the engines it links.
import Glibc

public enum BenchMain {
    /// Parses the command line and runs the workloads on the chosen engines (`--engine NAME`,
    /// default: all of `engines`, in that order), or plays a child-process role. Exits when done.
    public static func run(engines: [any KVStore.Type], arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        signal(SIGPIPE, SIG_IGN)
        let names = engines.map { $0.kind }
        guard !names.isEmpty, Set(names).count == names.count else {
            fatal("the engines must be at least one, with distinct names: \(names)")
        }
        let o = Options.parse(arguments, engines: names)
        func store(_ kind: EngineKind) -> any KVStore.Type { engines.first { $0.kind == kind }! }

        if let role = o.role {
            guard o.engines.count == 1 else { fatal("--role needs --engine \(Options.engineChoices(names))") }
            runRole(role, o, store(o.engines[0]))
            exit(0)
        }

        let base: String
        let temporary = o.dir == nil
        if let dir = o.dir {
            Sys.makeDirectories(dir)
            base = dir
        } else {
            base = Sys.makeTempDirectory(prefix: Sys.program)
        }
        Sys.err("\(Sys.program): engines \(o.engines.map(\.rawValue).joined(separator: ",")), "
                + "records \(o.records), batch \(o.batch), dir \(base)")

        var results: [BenchResult] = []
        for kind in o.engines { results += runEngine(store(kind), o, base) }
        Report.table(results)
        if temporary { Sys.removeTree(base) }
        exit(0)
    }

    /// Reports an engine error and exits with status 1.
    public static func fatal(_ message: String) -> Never { Sys.fatal(message) }

    static func runEngine<S: KVStore>(_: S.Type, _ o: Options, _ base: String) -> [BenchResult] {
        var runner = Runner<S>(options: o, base: base)
        for workload in o.workloads { runner.run(workload) }
        return runner.results
    }

    static func runRole<S: KVStore>(_ role: String, _ o: Options, _: S.Type) {
        switch role {
        case "mixed-reader": ChildRoles<S>.mixedReader(o)
        case "notify-observer": ChildRoles<S>.notifyObserver(o)
        default: Sys.fatal("unknown role \(role)")
        }
    }
}
