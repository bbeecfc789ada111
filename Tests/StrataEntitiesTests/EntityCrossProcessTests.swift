import Foundation
import Strata
import Synchronization
import StrataCore
import StrataTestFixtures
import Testing
@testable import StrataEntities

/// A writer process commits entity operations while this process, a read-only reader, observes
/// them through the change poller and reads every commit without reopening.
@Suite struct EntityCrossProcessTests {
    @Test func readerObservesWriterProcess() async throws {
        let directory = TemporaryDirectory("entities-xproc")
        let count = 20
        let writer = try ChildProcess(["entity-writer", directory.path, String(count)])
        #expect(writer.waitFor("ready") == "ready")
        let reader = try EntityStore(at: directory.path, mode: .readOnly)
        #expect(try await reader.entities(ofType: "item").isEmpty)
        let changes = reader.changes(schedule: .lowLatency)
        let subscribed = Mutex(false)
        let observed = Task { () throws -> [EntityCommit] in
            var commits: [EntityCommit] = []
            var iterator = changes.makeAsyncIterator()
            subscribed.withLock { $0 = true }
            while let commit = try await iterator.next() {
                commits.append(commit)
                if commit.changes.values.contains(where: { $0.kind == .deleted }) { break }
            }
            return commits
        }
        // The iterator subscribes (and takes its first snapshot) when it is made.
        while !subscribed.withLock({ $0 }) { try await Task.sleep(nanoseconds: 1_000_000) }
        writer.send("go")
        #expect(writer.waitFor("done", timeout: 60) == "done")
        let commits = try await observed.value
        #expect(commits.count == count)
        #expect(commits.map(\.generation) == commits.map(\.generation).sorted())
        let first = try #require(commits.first)
        // First commit: the meter and item 1 created, with their keys.
        #expect(first.changes.values.filter { $0.kind == .created }.count == 2)
        #expect(Set(first.changes.values.flatMap(\.keys)) == ["count", "name", "i", "meter"])
        // Later commits: the meter updated ("count"), a new item created.
        for commit in commits.dropFirst().dropLast() {
            #expect(commit.changes.values.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.created, .updated])
            #expect(commit.changes.values.contains { $0.kind == .updated && $0.keys == ["count"] })
        }
        // The same handle reads the final state without reopening.
        let meter = EntityReference.named("meter", ofType: "meter")
        let final = try await reader.records([meter], keys: ["count"])
        #expect(try final[meter]?.value("count", as: Int.self) == count)
        #expect(try await reader.entities(ofType: "item").count == count - 1)
        #expect(try await reader.referrers(to: meter, through: "meter").count == count - 1)
        #expect(try await reader.history(of: meter, key: "count").map(\.value) == (1...count).map { .int($0) })
        #expect(writer.waitForExit() == 0)
    }
}
