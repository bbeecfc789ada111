import Foundation
import Testing
@testable import Strata
import StrataTestFixtures

/// `PropertyReader`: an index reads its value by byte offset only where the key path names inline
/// stored storage, and through the key path otherwise; either way it reads what the key path reads.
@Suite struct PropertyReaderTests {
    struct Inner: Equatable { var code: String; var rank: Int }
    struct Record {
        var name: String
        var count: Int { didSet { changes += 1 } }          // observed
        var changes = 0
        var inner: Inner
        var optional: String?
        var shouted: String { name.uppercased() }           // computed
        @Clamped var score: Int                              // a property wrapper: computed access
    }
    @propertyWrapper struct Clamped { var raw: Int; var wrappedValue: Int { get { min(raw, 10) } set { raw = newValue } }
        init(wrappedValue: Int) { raw = wrappedValue } }
    final class Box { var title = "boxed"; let id = 7 }

    private let record = Record(name: "Ada", count: 3, inner: Inner(code: "x-1", rank: 9), optional: "o", score: 42)

    @Test func storedPropertiesAreReadByOffset() {
        let name = PropertyReader(\Record.name), changes = PropertyReader(\Record.changes)
        let code = PropertyReader(\Record.inner.code), optional = PropertyReader(\Record.optional)
        #expect(name.offset != nil && changes.offset != nil && code.offset != nil && optional.offset != nil)
        #expect(name.read(record) == "Ada")
        #expect(changes.read(record) == 0)
        #expect(code.read(record) == "x-1")
        #expect(PropertyReader(\Record.inner.rank).read(record) == 9)
        #expect(optional.read(record) == "o")
        var none = record
        none.optional = nil
        #expect(optional.read(none) == nil)
    }

    @Test func everythingElseIsReadThroughTheKeyPath() {
        let shouted = PropertyReader(\Record.shouted), score = PropertyReader(\Record.score)
        // An observed property is stored, but its key path goes through the observers: no offset.
        let count = PropertyReader(\Record.count)
        #expect(count.offset == nil)
        #expect(count.read(record) == 3)
        #expect(shouted.offset == nil)
        #expect(shouted.read(record) == "ADA")
        #expect(score.offset == nil)
        #expect(score.read(record) == 10)
        let box = Box()
        let title = PropertyReader(\Box.title)
        #expect(title.offset == nil)
        #expect(title.read(box) == "boxed")
        box.title = "changed"
        #expect(title.read(box) == "changed")
        #expect(PropertyReader(\Box.id).read(box) == 7)
    }

    /// Reading copies the value: the read value stays valid after the instance is gone.
    @Test func aReadValueOutlivesItsInstance() {
        var reads: [String] = []
        let name = PropertyReader(\Record.name)
        for index in 0..<100 {
            let temporary = Record(name: String(repeating: "n", count: 40) + "\(index)", count: index, inner: Inner(code: "", rank: 0), score: 0)
            reads.append(name.read(temporary))
        }
        #expect(reads.last == String(repeating: "n", count: 40) + "99")
    }

    // MARK: Through a datastore

    struct Tagged: Codable, Identifiable, Sendable, Equatable {
        var id: Int
        var tag: String
        var label: String { "label-" + tag }    // computed: indexed through the key path
    }

    struct TaggedFormat: DatastoreFormat {
        static let name = "tagged"
        typealias Instance = Tagged
        typealias Identifier = Int
        let tag = OneToOneIndex(\.tag)
        let label = Index(\.label)
    }

    /// A stored and a computed property indexed side by side stay exact through inserts, updates
    /// that change one or neither, unique clashes and deletes.
    @Test func storedAndComputedIndexesStayExact() throws {
        let dir = TemporaryDirectory()
        let store = try Store(at: dir.path)
        let tagged = try store.datastore(TaggedFormat.self)
        for id in 0..<50 { try tagged.persist(Tagged(id: id, tag: "t\(id)")) }
        try tagged.persist(Tagged(id: 7, tag: "seven"))
        try tagged.persist(Tagged(id: 8, tag: "t8"))            // unchanged
        #expect(throws: DatastoreError.self) { try tagged.persist(Tagged(id: 9, tag: "seven")) }
        try tagged.delete(10)
        #expect(try tagged.load("seven", from: \.tag)?.id == 7)
        #expect(try tagged.load("t7", from: \.tag) == nil)
        #expect(try tagged.loadAll("label-seven", from: \.label).map(\.id) == [7])
        #expect(try tagged.loadAll("label-t7", from: \.label).isEmpty)
        #expect(try tagged.loadAll("label-t10", from: \.label).isEmpty)
        #expect(try tagged.load("t9", from: \.tag)?.id == 9)
        #expect(try tagged.check().problems.isEmpty)
    }
}
