// A child process for Strata's multi-process tests. Tests never fork the test process; they run
// this executable with a role and talk to it over stdin/stdout, one line per message.
import Foundation
import StrataCore
import StrataTestFixtures

/// One unbuffered line to the parent.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    say("error \(message)")
    exit(2)
}

func value(_ view: ByteView?) -> String { view.map { String(decoding: $0.bytes, as: UTF8.self) } ?? "nil" }

let arguments = Array(CommandLine.arguments.dropFirst())
guard let role = arguments.first, arguments.count >= 2 else {
    fail("usage: strata-child ROLE STORE [ARGS...]")
}
let path = arguments[1]

do {
    switch role {
    case "watch":
        // Prints every new value of t/k until it equals the expected final one.
        let expected = arguments[2]
        let db = try Database(path: path, mode: .readOnly)
        var last = ""
        say("ready")
        while true {
            let current = try db.read { tx in try tx.treeIfPresent("t").map { value(try tx.get("k", in: $0)) } ?? "nil" }
            if current != last {
                say("seen \(current)")
                last = current
            }
            if current == expected { break }
            usleep(200)
        }
    case "snapshot":
        // Holds one snapshot across the parent's commits.
        let db = try Database(path: path, mode: .readOnly)
        let tx = try db.beginRead()
        say("value \(value(try tx.get("k", in: tx.tree("t"))))")
        _ = readLine()
        say("value \(value(try tx.get("k", in: tx.tree("t"))))")
        tx.end()
        say("fresh \(try db.read { value(try $0.get("k", in: $0.tree("t"))) })")
    case "try-write":
        do {
            _ = try Database(path: path)
            say("opened")
        } catch let error as StrataError {
            if case .writerLocked(_, let pid) = error { say("locked \(pid)") } else { say("error \(error)") }
        }
    case "hold-writer":
        // Commits `count` values of t/k, reports, then waits to be killed.
        let count = Int(arguments[2]) ?? 1
        let db = try Database(path: path)
        for i in 1...count {
            try db.write { tx in try tx.put("k", "v\(i)", in: try tx.openOrCreateTree("t")) }
        }
        say("committed \(count)")
        while true { sleep(1) }
    case "pin-reader":
        exitWhenParentIsGone()
        let db = try Database(path: path, mode: .readOnly)
        let tx = try db.beginRead()
        say("pinned \(tx.generation)")
        while true { sleep(1) }
    case "snapshot-slot":
        // Keeps the reader slot of `withSnapshot` (idle between snapshots), then on a line from the
        // parent holds a snapshot until killed.
        let db = try Database(path: path, mode: .readOnly)
        try db.withSnapshot { _ in }
        say("idle")
        _ = readLine()
        try db.withSnapshot { snapshot in
            say("reading \(snapshot.generation)")
            while true { sleep(1) }
        }
    case "crash-writer":
        // Commits forever: commit i sets counter = i, adds item i, deletes item i-50.
        var options = DatabaseOptions()
        options.durability = durabilityArgument(arguments[2])
        let db = try Database(path: path, options: options)
        var next = try CrashLoop.nextCommit(in: db)
        while true {
            let i = next
            try CrashLoop.commit(i, to: db)
            say("committed \(i)")
            next += 1
        }
    case "observe":
        // Observes commits touching `filter` (or every tree if "*") until generation >= target.
        let filter = arguments[2] == "*" ? nil : Set(arguments[2].split(separator: ",").map(String.init))
        let target = UInt64(arguments[3])!
        let db = try Database(path: path, mode: .readOnly)
        let stream = try db.changes(trees: filter)
        say("ready \(stream.generation)")
        var seen = stream.generation
        if seen < target {
            for await event in stream {
                say("event \(event.generation) \(event.changedTrees.sorted().joined(separator: ","))")
                seen = event.generation
                if seen >= target { break }
            }
        }
        let final = try db.read { tx in try tx.treeIfPresent("a").map { value(try tx.get("k", in: $0)) } ?? "nil" }
        say("final \(final)")
    case "standby":
        // Waits to become the writer, then commits t/k = "standby PID" and keeps the lock.
        var options = DatabaseOptions()
        options.writerLockWait = .forever
        say("waiting")
        let db = try Database(path: path, options: options)
        say("writer \(getpid())")
        let first = Int(arguments[2]) ?? 1, last = Int(arguments[3]) ?? first
        for i in first...last {
            try db.write { tx in
                try tx.put("k", "v\(i)", in: try tx.openOrCreateTree("a"))
                try tx.put("owner", "standby \(getpid())", in: try tx.openOrCreateTree("t"))
            }
            usleep(2000)
        }
        say("committed \(last)")
        while true { sleep(1) }
    case "writer-series":
        // Commits a/k = v1...vN, one commit every 2 ms, then waits to be killed.
        let count = Int(arguments[2]) ?? 1
        let db = try Database(path: path)
        for i in 1...count {
            try db.write { tx in try tx.put("k", "v\(i)", in: try tx.openOrCreateTree("a")) }
            usleep(2000)
        }
        say("committed \(count)")
        while true { sleep(1) }
    case "poller-lifecycle":
        let db = try Database(path: path, mode: .readOnly)
        say("before \(ChangeMonitor.shared.isRunning)")
        let stream = try db.changes()
        say("subscribed \(ChangeMonitor.shared.isRunning)")
        let task = Task { for await _ in stream {}; return "ended" }
        usleep(20_000)
        task.cancel()
        say("iteration \(await task.value)")
        var waited = 0
        while ChangeMonitor.shared.isRunning && waited < 5000 { usleep(1000); waited += 1 }
        say("after \(ChangeMonitor.shared.isRunning) \(ChangeMonitor.shared.subscriberCount)")
    default:
        if try !runFaultRole(role, arguments), try !runGroupRole(role, arguments), try await !runTypedRole(role, arguments),
           try await !runEntityRole(role, arguments) {
            fail("unknown role \(role)")
        }
    }
} catch {
    fail("\(error)")
}
