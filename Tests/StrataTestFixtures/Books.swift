// Formats shared by the typed-layer tests and the strata-child process, so both sides of a
// multi-process test read and write the same declarations.
import Foundation
import Strata

public struct Book: Codable, Identifiable, Sendable, Equatable {
    public var id: UUID
    public var title: String
    public var authors: [String]
    public var isbn: String
    public var shelf: Int
    public var published: Date

    public init(id: UUID = UUID(), title: String, authors: [String], isbn: String, shelf: Int, published: Date = Date(timeIntervalSince1970: 0)) {
        self.id = id
        self.title = title
        self.authors = authors
        self.isbn = isbn
        self.shelf = shelf
        self.published = published
    }
}

/// Version 1 stored a single author and no shelf.
public struct BookV1: Codable, Sendable, Identifiable {
    public var id: UUID
    public var title: String
    public var author: String
    public var isbn: String

    public init(id: UUID, title: String, author: String, isbn: String) {
        self.id = id
        self.title = title
        self.author = author
        self.isbn = isbn
    }
}

public struct BookFormat: DatastoreFormat {
    public static let name = "books"
    public enum Version: Int, DatastoreVersion { case v1 = 1, v2 = 2 }
    public static let currentVersion = Version.v2
    public typealias Instance = Book
    public typealias Identifier = UUID

    public static func migrate(_ stored: StoredInstance, from version: Version) throws -> Book {
        switch version {
        case .v1:
            let old = try stored.decode(BookV1.self)
            return Book(id: old.id, title: old.title, authors: [old.author], isbn: old.isbn, shelf: 0)
        case .v2:
            return try stored.decode(Book.self)
        }
    }

    public init() {}

    public let title = Index(\.title)
    public let authors = ManyToManyIndex(\.authors)
    @Direct public var isbn = OneToOneIndex(\.isbn)
    public let shelfTitle = Index(\.shelf, \.title)
}

/// The same datastore as written by an old build: version 1 only (it declares no `Version`, so
/// `InitialVersion`: the migration tests read what it wrote through `BookFormat.Version.v1`).
public struct BookFormatV1: DatastoreFormat {
    public static let name = "books"
    public typealias Instance = BookV1
    public typealias Identifier = UUID
    public init() {}
    public let isbn = OneToOneIndex(\.isbn)
}
