import Foundation
import Testing
import StrataTestFixtures
@testable import Strata

/// The instance buffers a finished write context hands to the next one (`WriteContextReuse`) are
/// empty: the last instance's identifier and envelope do not stay in memory after the context
/// ended, whether its transaction committed or aborted.
@Suite struct WriteContextReuseBufferTests {
    private struct IntendedFailure: Error {}

    private func expectKeptBuffersEmpty(_ store: Store<ReadWrite>, _ when: Comment) throws {
        let state = try #require(store.writeContextReuse.take(), when)
        for (_, trees) in state.datastoreTrees {
            #expect(trees.instanceBuffers.id.isEmpty, when)
            #expect(trees.instanceBuffers.envelope.isEmpty, when)
            #expect(trees.scratch.keys.isEmpty && trees.scratch.entries.isEmpty, when)
        }
        store.writeContextReuse.give(state)
    }

    @Test func buffersAreHandedOnEmptyAfterACommitAndAnAbort() throws {
        let store = try Store.inMemory()
        let books = try store.datastore(BookFormat.self)
        try store.write { tx in
            try tx[books].persist(Book(title: "kept", authors: ["A"], isbn: "isbn-1", shelf: 1))
        }
        try expectKeptBuffersEmpty(store, "after a commit")
        do {
            try store.write { tx in
                try tx[books].persist(Book(title: "secret", authors: ["B"], isbn: "isbn-2", shelf: 2))
                throw IntendedFailure()
            }
        } catch is IntendedFailure {}
        try expectKeptBuffersEmpty(store, "after an abort")
        #expect(try books.count == 1)
    }
}
