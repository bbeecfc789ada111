import Foundation
import Testing
@testable import Strata

/// What `WriteContextReuse` refuses to keep for the next write context: state of many datastores
/// or logs, and buffers grown large by one big write (they would be held for the store's life).
@Suite struct WriteContextReuseLimitTests {
    private final class Schema {}

    private func state(datastores: Int, logs: Int, keyBytes: Int) -> WriteContextReuse.State {
        let memory = ChangeLogMemory()
        let appenders = (0..<logs).map { ChangeLogAppender(logName: "log\($0)", memory: memory) }
        let trees = (0..<datastores).map { index -> (schema: ObjectIdentifier, trees: DatastoreTrees) in
            let schema = Schema()
            let trees = DatastoreTrees(schema: schema, log: appenders[index % max(1, appenders.count)])
            trees.scratch.keys.reserveCapacity(keyBytes)
            return (ObjectIdentifier(schema), trees)
        }
        return WriteContextReuse.State(changeLogs: appenders, datastoreTrees: trees)
    }

    @Test func smallStateIsKept() {
        let reuse = WriteContextReuse()
        reuse.give(state(datastores: 2, logs: 2, keyBytes: 4_096))
        #expect(reuse.take() != nil)
        #expect(reuse.take() == nil)
    }

    @Test func largeBuffersAreNotKept() {
        let reuse = WriteContextReuse()
        reuse.give(state(datastores: 1, logs: 1, keyBytes: 2 * WriteContextReuse.maximumBufferBytes))
        #expect(reuse.take() == nil)
    }

    @Test func manyLogsAreNotKept() {
        let reuse = WriteContextReuse()
        reuse.give(state(datastores: 1, logs: WriteContextReuse.maximumDatastores + 1, keyBytes: 0))
        #expect(reuse.take() == nil)
    }
}
