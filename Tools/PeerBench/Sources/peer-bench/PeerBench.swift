// peer-bench: Strata's benchmark workloads on LMDB and SQLite.
import Glibc

@main
struct PeerBench {
    static func main() {
        signal(SIGPIPE, SIG_IGN)
        let o = Options.parse(Array(CommandLine.arguments.dropFirst()))
        if let role = o.role {
            switch o.engines.count == 1 ? o.engines[0] : nil {
            case .lmdb?: runRole(role, o, LMDBStore.self)
            case .sqlite?: runRole(role, o, SQLiteStore.self)
            case nil: Sys.fatal("--role needs --engine lmdb|sqlite")
            }
            return
        }

        let base: String
        let temporary = o.dir == nil
        if let dir = o.dir {
            Sys.makeDirectories(dir)
            base = dir
        } else {
            base = Sys.makeTempDirectory(prefix: "peer-bench")
        }
        Sys.err("peer-bench: engines \(o.engines.map(\.rawValue).joined(separator: ",")), "
                + "records \(o.records), batch \(o.batch), dir \(base)")

        var results: [BenchResult] = []
        for engine in o.engines {
            switch engine {
            case .lmdb: results += runEngine(LMDBStore.self, o, base)
            case .sqlite: results += runEngine(SQLiteStore.self, o, base)
            }
        }
        Report.table(results)
        if temporary { Sys.removeTree(base) }
    }

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
